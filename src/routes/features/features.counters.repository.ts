/**
 * Counters recomputed from their rows after a change that moved many votes at once (owner-api-v3.md
 * Rules 2-3: merge, unmerge, deletion): features' vote_count, weighted_score and trending_score,
 * voters' vote_count and the project's voter count shards. A single vote moves its counters in
 * its own statement instead (src/routes/votes/votes.repository.ts).
 */
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import { VOTER_COUNT_SHARDS } from "../../../db/schema.ts";
import { trendingFromVotes } from "../../lib/rules/trending.ts";

/**
 * Sets vote_count, weighted_score and trending_score of the features `featureIds` from their
 * vote rows (owner-api-v3.md Rules 2-3: after a merge, unmerge or deletion moved many votes at
 * once, the counters are recomputed exactly rather than moved). The caller holds the feature rows.
 */
export async function recountFeatures(db: Db, featureIds: readonly number[]): Promise<void> {
  if (featureIds.length === 0) return;
  await db
    .updateTable("features")
    .set({
      vote_count: sql<number>`(SELECT count(*)::int FROM votes WHERE votes.feature_id = features.id)`,
      weighted_score: sql<number>`(SELECT coalesce(sum(weight), 0)::int FROM votes WHERE votes.feature_id = features.id)`,
      trending_score: trendingFromVotes(sql.ref("features.id")),
    })
    .where("id", "=", sql<number>`any(${[...featureIds]}::int[])`)
    .execute();
}

/**
 * Sets voters.vote_count of `voterIds` from their vote rows, and moves the project's voter count
 * (the voter's shard row of project_voter_counts) for each voter who gained a first vote or lost
 * the last. Voter rows are locked in id order and shard rows in shard order, after the feature
 * rows the caller holds: the order the vote statements take (feature, voter, shard), so owner
 * changes and votes never wait on each other in a cycle.
 */
export async function recountVoters(db: Db, projectId: number, voterIds: readonly number[]): Promise<void> {
  const ids = [...new Set(voterIds)].sort((a, b) => a - b);
  if (ids.length === 0) return;
  const before = await db
    .selectFrom("voters")
    .select(["id", "vote_count"])
    .where("id", "=", sql<number>`any(${ids}::int[])`)
    .orderBy("id")
    .forNoKeyUpdate()
    .execute();
  const after = await db
    .updateTable("voters")
    .set({ vote_count: sql<number>`(SELECT count(*)::int FROM votes WHERE votes.voter_id = voters.id)` })
    .where("id", "=", sql<number>`any(${ids}::int[])`)
    .returning(["id", "vote_count"])
    .execute();
  const had = new Map(before.map((row) => [row.id, row.vote_count > 0]));
  const deltas = new Map<number, number>();
  for (const row of after) {
    const delta = Number(row.vote_count > 0) - Number(had.get(row.id) ?? false);
    if (delta === 0) continue;
    const shard = row.id % VOTER_COUNT_SHARDS;
    deltas.set(shard, (deltas.get(shard) ?? 0) + delta);
  }
  for (const [shard, delta] of [...deltas].sort(([a], [b]) => a - b)) {
    if (delta === 0) continue;
    await db
      .insertInto("project_voter_counts")
      .values({ project_id: projectId, shard, voter_count: Math.max(delta, 0) })
      .onConflict((oc) =>
        oc.columns(["project_id", "shard"]).doUpdateSet((eb) => ({ voter_count: eb("project_voter_counts.voter_count", "+", delta) })),
      )
      .execute();
  }
}
