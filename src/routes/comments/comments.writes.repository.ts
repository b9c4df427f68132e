/**
 * Comment writes (contract, "Taking part"; owner-api-v3.md comments): each runs in one
 * transaction that changes the row and the counter it moves (features.comment_count,
 * comments.like_count) with SQL increments. Writes that move comment_count lock the feature row
 * first, then the comment (the order votes and the owner's feature deletion and merges take), so
 * a comment racing its feature's deletion waits and then finds it gone (404) instead of failing
 * a foreign key, and nothing waits in a cycle. Concurrent deletes, replies and likes serialise on
 * the comment row: a delete never misses a reply written meanwhile, a reply never lands under a
 * deleted parent, and like_count always equals the number of like rows. Writing a comment
 * records comment.created and deleting one records comment.deleted for it and for each reply
 * removed with it, in the same transaction (owner-api-v3.md, "Events"; the object is the
 * CommentObject as the owner API shows it). Likes record no event. Writing a comment or reply
 * also subscribes its author to the feature (engagement-api-v3.md, "Subscriptions" rule 1:
 * reason `comment`; the owner's comments subscribe the voter named by author_voter_id), unless
 * they hold a row for it already.
 */
import type { Transaction } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { Database, ProjectSettings } from "../../../db/schema.ts";
import { recordEvents } from "../../events/outbox.ts";
import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import { subscribeOnChange } from "../../lib/data/subscriptions.ts";
import { findVisibleFeature } from "../features/index.ts";
import { ownerCommentObject } from "./comments.mapper.ts";
import { type CommentRow, selectCommentRow } from "./comments.repository.ts";

type ProjectRef = { id: number; settings: ProjectSettings };

export type CreateCommentResult = { kind: "created"; row: CommentRow } | { kind: "bad_parent" } | { kind: "no_feature" };

/** Locks the feature row of the project (FOR NO KEY UPDATE); false when it does not exist (any more). */
async function lockFeature(trx: Transaction<Database>, projectId: number, featureId: number): Promise<boolean> {
  const row = await trx
    .selectFrom("features")
    .select("id")
    .where("id", "=", featureId)
    .where("project_id", "=", projectId)
    .forNoKeyUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Writes a comment (a reply when parentId is set), adds 1 to the feature's comment_count and
 * subscribes the author (reason `comment`) unless they hold a subscription row for the feature.
 * `bad_parent` when parentId is not a top-level comment of the same feature; the parent row is
 * key-share locked so a concurrent delete waits for this reply and then removes it too.
 * `no_feature` when the feature was deleted meanwhile. The returned row's is_own / has_liked are
 * those of the author.
 */
export async function createComment(
  db: Db,
  input: { projectId: number; featureId: number; voterId: number; content: string; parentId: number | null },
): Promise<CreateCommentResult> {
  return withProjectWriteLock(db, input.projectId, async (trx) => {
    if (!(await lockFeature(trx, input.projectId, input.featureId))) return { kind: "no_feature" } as const;
    if (input.parentId !== null) {
      const parent = await trx
        .selectFrom("comments")
        .select("id")
        .where("id", "=", input.parentId)
        .where("feature_id", "=", input.featureId)
        .where("parent_id", "is", null)
        .forKeyShare()
        .executeTakeFirst();
      if (!parent) return { kind: "bad_parent" } as const;
    }
    const inserted = await trx
      .insertInto("comments")
      .values({
        project_id: input.projectId,
        feature_id: input.featureId,
        parent_id: input.parentId,
        voter_id: input.voterId,
        content: input.content,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    await trx
      .updateTable("features")
      .set((eb) => ({ comment_count: eb("comment_count", "+", 1) }))
      .where("id", "=", input.featureId)
      .execute();
    const row = await selectCommentRow(trx.selectFrom("comments"), input.voterId)
      .where("comments.id", "=", inserted.id)
      .executeTakeFirstOrThrow();
    await subscribeOnChange(trx, {
      projectId: input.projectId,
      featureId: input.featureId,
      voterId: input.voterId,
      reason: "comment",
      now: row.created_at,
    });
    await recordEvents(trx, input.projectId, [
      { type: "comment.created", object: { ...ownerCommentObject(row) }, subjectVoterId: input.voterId },
    ]);
    return { kind: "created", row } as const;
  });
}

export type DeleteCommentResult =
  | { kind: "deleted"; featureId: number; commentCount: number }
  | { kind: "not_found" }
  | { kind: "not_own" };

/**
 * Deletes comment `commentId` of the project with its replies and subtracts all of them from the
 * feature's comment_count, locking the feature row, then the comment. `allowed` decides, with the
 * comment locked, whether this caller may delete it ("not_found" / "not_own" refuse). A second
 * concurrent delete of the same comment waits on the row lock and then finds nothing.
 */
export async function deleteCommentThread(
  db: Db,
  projectId: number,
  commentId: number,
  allowed: (trx: Transaction<Database>, comment: { feature_id: number; voter_id: number }) => Promise<"yes" | "not_found" | "not_own">,
): Promise<DeleteCommentResult> {
  return withProjectWriteLock(db, projectId, async (trx) => {
    const seen = await trx
      .selectFrom("comments")
      .select("feature_id")
      .where("id", "=", commentId)
      .where("project_id", "=", projectId)
      .executeTakeFirst();
    if (!seen || !(await lockFeature(trx, projectId, seen.feature_id))) return { kind: "not_found" } as const;
    const target = await trx
      .selectFrom("comments")
      .select(["id", "feature_id", "voter_id"])
      .where("id", "=", commentId)
      .where("feature_id", "=", seen.feature_id)
      .forUpdate()
      .executeTakeFirst();
    if (!target) return { kind: "not_found" } as const;
    const verdict = await allowed(trx, target);
    if (verdict !== "yes") return { kind: verdict } as const;
    // The thread as it was, for its comment.deleted events: no reply can join it meanwhile
    // (a reply key-share locks its parent, which this transaction holds FOR UPDATE).
    const thread = await selectCommentRow(trx.selectFrom("comments"), null)
      .where((eb) => eb.or([eb("comments.id", "=", commentId), eb("comments.parent_id", "=", commentId)]))
      .orderBy("comments.id")
      .execute();
    // Explicit rather than left to the FK cascade, so the count of removed rows is exact.
    const removed = await trx
      .deleteFrom("comments")
      .where((eb) => eb.or([eb("id", "=", commentId), eb("parent_id", "=", commentId)]))
      .returning("id")
      .execute();
    const removedIds = new Set(removed.map((row) => row.id));
    // One comment.deleted per comment row removed: the comment first, then its replies.
    await recordEvents(
      trx,
      projectId,
      thread
        .filter((row) => removedIds.has(row.id))
        .sort((a, b) => Number(a.id !== commentId) - Number(b.id !== commentId) || a.id - b.id)
        .map((row) => ({ type: "comment.deleted" as const, object: { ...ownerCommentObject(row) }, subjectVoterId: row.author_id })),
    );
    const feature = await trx
      .updateTable("features")
      .set((eb) => ({ comment_count: eb("comment_count", "-", removed.length) }))
      .where("id", "=", target.feature_id)
      .returning("comment_count")
      .executeTakeFirstOrThrow();
    return { kind: "deleted", featureId: target.feature_id, commentCount: feature.comment_count } as const;
  });
}

/**
 * Deletes the voter's comment `commentId` of the project with its replies (contract, "Taking
 * part" rule 5). `not_found` for an unknown comment, another project's, or one on a feature the
 * voter cannot see; `not_own` for another voter's comment.
 */
export async function deleteOwnComment(db: Db, project: ProjectRef, commentId: number, voterId: number): Promise<DeleteCommentResult> {
  return deleteCommentThread(db, project.id, commentId, async (trx, comment) => {
    if (!(await findVisibleFeature(trx, project, comment.feature_id, voterId))) return "not_found";
    return comment.voter_id === voterId ? "yes" : "not_own";
  });
}

export type ToggleLikeResult = { kind: "toggled"; hasLiked: boolean; likeCount: number } | { kind: "not_found" };

/**
 * Likes the comment if the voter does not yet, unlikes it otherwise, and moves like_count by the
 * row actually inserted or deleted. `not_found` for an unknown comment, another project's, or one
 * on a feature the voter cannot see.
 */
export async function toggleCommentLike(db: Db, project: ProjectRef, commentId: number, voterId: number): Promise<ToggleLikeResult> {
  return withProjectWriteLock(db, project.id, async (trx) => {
    const target = await trx
      .selectFrom("comments")
      .select(["id", "feature_id"])
      .where("id", "=", commentId)
      .where("project_id", "=", project.id)
      .forNoKeyUpdate()
      .executeTakeFirst();
    if (!target || !(await findVisibleFeature(trx, project, target.feature_id, voterId))) return { kind: "not_found" } as const;
    const inserted = await trx
      .insertInto("comment_likes")
      .values({ comment_id: commentId, voter_id: voterId })
      .onConflict((oc) => oc.columns(["comment_id", "voter_id"]).doNothing())
      .returning("comment_id")
      .executeTakeFirst();
    let delta = 1;
    if (!inserted) {
      const removed = await trx
        .deleteFrom("comment_likes")
        .where("comment_id", "=", commentId)
        .where("voter_id", "=", voterId)
        .returning("comment_id")
        .executeTakeFirst();
      delta = removed ? -1 : 0;
    }
    const updated = await trx
      .updateTable("comments")
      .set((eb) => ({ like_count: eb("like_count", "+", delta) }))
      .where("id", "=", commentId)
      .returning("like_count")
      .executeTakeFirstOrThrow();
    return { kind: "toggled", hasLiked: inserted !== undefined, likeCount: updated.like_count } as const;
  });
}
