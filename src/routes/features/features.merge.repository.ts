/**
 * Merging a duplicate into another feature and undoing it (owner-api-v3.md, Rule 2), with the
 * record that makes the undo exact (feature_merges / feature_merge_votes, migration
 * 2026-11-23T10-00-00). Both run inside the caller's transaction: the two features are locked in
 * id order first (FOR NO KEY UPDATE, the lock a vote statement takes before touching its vote),
 * then the merge record, then voters by id and voter-count shards (recountVoters). Votes move by
 * DELETE + INSERT so that the revenue aggregates' triggers (feature_tier_votes) follow them.
 */
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import { copySubscriptionsOnMerge } from "../../lib/data/subscriptions.ts";
import { recountFeatures, recountVoters } from "./features.counters.repository.ts";

export type MergeOutcome =
  | { kind: "merged" }
  | { kind: "source_missing" }
  | { kind: "target_missing" }
  /** Into itself, into a merged feature, or a feature already merged (409 already_exists). */
  | { kind: "conflict"; message: string };

/** Locks the features `ids` of the project in id order; returns the rows found. */
async function lockFeatures(db: Db, projectId: number, ids: number[]) {
  return db
    .selectFrom("features")
    .select(["id", "status", "column_id", "linked_feature_id"])
    .where("project_id", "=", projectId)
    .where("id", "in", ids)
    .orderBy("id")
    .forNoKeyUpdate()
    .execute();
}

/**
 * Merges feature `sourceId` (the duplicate) into `targetId`: every vote of the duplicate moves to
 * the target, except that a voter with a vote on both keeps one vote on the target, the earlier
 * one (its weight and time); the duplicate becomes archived, with linked_feature = target.
 * Comments stay. Counters of both features, of the voters who lost a duplicate vote, and the
 * project's voter count are recomputed from the rows. The duplicate's subscribers are subscribed
 * to the target (engagement-api-v3.md, "Subscriptions" rule 3: reason `merge`; not those who
 * opted out of the duplicate, nor voters holding a row on the target already).
 */
export async function mergeFeature(db: Db, projectId: number, sourceId: number, targetId: number, now: Date): Promise<MergeOutcome> {
  if (sourceId === targetId) {
    const exists = await db
      .selectFrom("features")
      .select("id")
      .where("id", "=", sourceId)
      .where("project_id", "=", projectId)
      .executeTakeFirst();
    return exists ? { kind: "conflict", message: "a feature cannot be merged into itself" } : { kind: "source_missing" };
  }
  const locked = await lockFeatures(db, projectId, [sourceId, targetId]);
  const source = locked.find((row) => row.id === sourceId);
  if (!source) return { kind: "source_missing" };
  if (!locked.some((row) => row.id === targetId)) return { kind: "target_missing" };
  const merges = await db.selectFrom("feature_merges").select("source_id").where("source_id", "in", [sourceId, targetId]).execute();
  if (merges.some((row) => row.source_id === sourceId)) return { kind: "conflict", message: "this feature is already merged" };
  if (merges.some((row) => row.source_id === targetId))
    return { kind: "conflict", message: "into_id is itself merged into another feature" };

  const merge = await db
    .insertInto("feature_merges")
    .values({
      project_id: projectId,
      source_id: sourceId,
      target_id: targetId,
      previous_status: source.status,
      previous_column_id: source.column_id,
      previous_linked_feature_id: source.linked_feature_id,
      linked_set_by_merge: source.linked_feature_id !== targetId,
      created_at: now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  // Every vote of the duplicate, and for a voter with both, the target vote's own values when
  // the duplicate's (earlier) vote replaces them.
  await sql`INSERT INTO feature_merge_votes (merge_id, voter_id, kind, weight, created_at, target_weight, target_created_at)
    SELECT ${merge.id}::int, s.voter_id, CASE WHEN t.voter_id IS NULL THEN 'moved' ELSE 'duplicate' END, s.weight, s.created_at,
      CASE WHEN s.created_at < t.created_at THEN t.weight END, CASE WHEN s.created_at < t.created_at THEN t.created_at END
    FROM votes s LEFT JOIN votes t ON t.feature_id = ${targetId}::int AND t.voter_id = s.voter_id
    WHERE s.feature_id = ${sourceId}::int`.execute(db);
  await db.deleteFrom("votes").where("feature_id", "=", sourceId).execute();
  await sql`INSERT INTO votes (feature_id, voter_id, project_id, weight, created_at)
    SELECT ${targetId}::int, voter_id, ${projectId}::int, weight, created_at
    FROM feature_merge_votes WHERE merge_id = ${merge.id}::int AND kind = 'moved'`.execute(db);
  await sql`UPDATE votes SET weight = m.weight, created_at = m.created_at
    FROM feature_merge_votes m
    WHERE m.merge_id = ${merge.id}::int AND m.kind = 'duplicate' AND m.target_created_at IS NOT NULL
      AND votes.feature_id = ${targetId}::int AND votes.voter_id = m.voter_id`.execute(db);
  await db
    .updateTable("features")
    .set({ status: "archived", column_id: null, linked_feature_id: targetId, updated_at: now })
    .where("id", "=", sourceId)
    .execute();
  await copySubscriptionsOnMerge(db, { projectId, sourceId, targetId, now });
  await recountFeatures(db, [sourceId, targetId]);
  const duplicates = await db
    .selectFrom("feature_merge_votes")
    .select("voter_id")
    .where("merge_id", "=", merge.id)
    .where("kind", "=", "duplicate")
    .execute();
  await recountVoters(
    db,
    projectId,
    duplicates.map((row) => row.voter_id),
  );
  return { kind: "merged" };
}

export type UnmergeOutcome = { kind: "unmerged" } | { kind: "source_missing" } | { kind: "not_merged" };

/**
 * Undoes the merge of `sourceId`: the votes that moved go back (those still on the target as
 * they arrived; a voter who withdrew one since keeps it withdrawn), every duplicate vote the
 * merge dropped is put back on the source, a target vote that took the duplicate's earlier
 * values gets its own back, and the source's status and column from before the merge are
 * restored (a column deleted since: the first column of its board, by Rule 1). linked_feature
 * returns to what it was when the merge set it (and the owner has not changed it since).
 * Subscriptions stay as they are (engagement-api-v3.md, "Subscriptions" rule 3).
 */
export async function unmergeFeature(db: Db, projectId: number, sourceId: number, now: Date): Promise<UnmergeOutcome> {
  const seen = await db
    .selectFrom("feature_merges")
    .select("target_id")
    .where("source_id", "=", sourceId)
    .where("project_id", "=", projectId)
    .executeTakeFirst();
  if (!seen) {
    const exists = await db
      .selectFrom("features")
      .select("id")
      .where("id", "=", sourceId)
      .where("project_id", "=", projectId)
      .executeTakeFirst();
    return exists ? { kind: "not_merged" } : { kind: "source_missing" };
  }
  const locked = await lockFeatures(db, projectId, [sourceId, seen.target_id]);
  if (!locked.some((row) => row.id === sourceId)) return { kind: "source_missing" };
  // Read again under the locks: a concurrent unmerge (or the target's deletion) may have won.
  const merge = await db.selectFrom("feature_merges").selectAll().where("source_id", "=", sourceId).forUpdate().executeTakeFirst();
  if (!merge || merge.target_id !== seen.target_id) return { kind: "not_merged" };
  const { id: mergeId, target_id: targetId } = merge;

  const back = await sql<{ voter_id: number }>`DELETE FROM votes USING feature_merge_votes m
    WHERE m.merge_id = ${mergeId}::int AND m.kind = 'moved' AND votes.feature_id = ${targetId}::int
      AND votes.voter_id = m.voter_id AND votes.created_at = m.created_at AND votes.weight = m.weight
    RETURNING votes.voter_id`.execute(db);
  const movedBack = back.rows.map((row) => row.voter_id);
  await sql`INSERT INTO votes (feature_id, voter_id, project_id, weight, created_at)
    SELECT ${sourceId}::int, voter_id, ${projectId}::int, weight, created_at FROM feature_merge_votes
    WHERE merge_id = ${mergeId}::int AND (kind = 'duplicate' OR voter_id = any(${movedBack}::int[]))
    ON CONFLICT (feature_id, voter_id) DO NOTHING`.execute(db);
  await sql`UPDATE votes SET weight = m.target_weight, created_at = m.target_created_at
    FROM feature_merge_votes m
    WHERE m.merge_id = ${mergeId}::int AND m.kind = 'duplicate' AND m.target_created_at IS NOT NULL
      AND votes.feature_id = ${targetId}::int AND votes.voter_id = m.voter_id AND votes.created_at = m.created_at`.execute(db);

  const source = await db
    .selectFrom("features")
    .select(["board_id", "linked_feature_id"])
    .where("id", "=", sourceId)
    .executeTakeFirstOrThrow();
  let columnId = merge.previous_column_id;
  if (columnId === null && merge.previous_status !== "archived") {
    // The column the feature came from was deleted since: its board's first column by Rule 1.
    const first = await db
      .selectFrom("columns")
      .select("id")
      .where("board_id", "=", source.board_id)
      .orderBy(sql`status IS NOT DISTINCT FROM ${merge.previous_status}`, "desc")
      .orderBy("position")
      .orderBy("id")
      .executeTakeFirst();
    columnId = first?.id ?? null;
  }
  const linked =
    merge.linked_set_by_merge && source.linked_feature_id === targetId ? { linked_feature_id: merge.previous_linked_feature_id } : {};
  await db
    .updateTable("features")
    .set({ status: merge.previous_status, column_id: columnId, updated_at: now, ...linked })
    .where("id", "=", sourceId)
    .execute();
  const voters = await db.selectFrom("feature_merge_votes").select("voter_id").where("merge_id", "=", mergeId).execute();
  await db.deleteFrom("feature_merges").where("id", "=", mergeId).execute();
  await recountFeatures(db, [sourceId, targetId]);
  await recountVoters(
    db,
    projectId,
    voters.map((row) => row.voter_id),
  );
  return { kind: "unmerged" };
}
