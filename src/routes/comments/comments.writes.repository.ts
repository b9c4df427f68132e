/**
 * Comment writes (contract, "Taking part"): each runs in one transaction that changes the row and
 * the counter it moves (features.comment_count, comments.like_count) with SQL increments, and
 * locks the comment row first so that concurrent deletes, replies and likes serialise on it:
 * a delete never misses a reply written meanwhile, a reply never lands under a deleted parent,
 * and like_count always equals the number of like rows.
 */
import type { Db } from "../../../db/connect.ts";
import type { ProjectSettings } from "../../../db/schema.ts";
import { findVisibleFeature } from "../features/features.visibility.ts";
import { type CommentRow, selectCommentRow } from "./comments.repository.ts";

type ProjectRef = { id: number; settings: ProjectSettings };

export type CreateCommentResult = { kind: "created"; row: CommentRow } | { kind: "bad_parent" };

/**
 * Writes a comment (a reply when parentId is set) and adds 1 to the feature's comment_count.
 * `bad_parent` when parentId is not a top-level comment of the same feature; the parent row is
 * key-share locked so a concurrent delete waits for this reply and then removes it too.
 */
export async function createComment(
  db: Db,
  input: { projectId: number; featureId: number; voterId: number; content: string; parentId: number | null },
): Promise<CreateCommentResult> {
  return db.transaction().execute(async (trx) => {
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
    return { kind: "created", row } as const;
  });
}

export type DeleteCommentResult =
  | { kind: "deleted"; featureId: number; commentCount: number }
  | { kind: "not_found" }
  | { kind: "not_own" };

/**
 * Deletes the voter's comment `commentId` of the project with its replies and subtracts all of
 * them from the feature's comment_count. `not_found` for an unknown comment, another project's,
 * or one on a feature the voter cannot see; `not_own` for another voter's comment. A second
 * concurrent delete of the same comment waits on the row lock and then finds nothing.
 */
export async function deleteOwnComment(db: Db, project: ProjectRef, commentId: number, voterId: number): Promise<DeleteCommentResult> {
  return db.transaction().execute(async (trx) => {
    const target = await trx
      .selectFrom("comments")
      .select(["id", "feature_id", "voter_id"])
      .where("id", "=", commentId)
      .where("project_id", "=", project.id)
      .forUpdate()
      .executeTakeFirst();
    if (!target || !(await findVisibleFeature(trx, project, target.feature_id, voterId))) return { kind: "not_found" } as const;
    if (target.voter_id !== voterId) return { kind: "not_own" } as const;
    // Explicit rather than left to the FK cascade, so the count of removed rows is exact.
    const removed = await trx
      .deleteFrom("comments")
      .where((eb) => eb.or([eb("id", "=", commentId), eb("parent_id", "=", commentId)]))
      .returning("id")
      .execute();
    const feature = await trx
      .updateTable("features")
      .set((eb) => ({ comment_count: eb("comment_count", "-", removed.length) }))
      .where("id", "=", target.feature_id)
      .returning("comment_count")
      .executeTakeFirstOrThrow();
    return { kind: "deleted", featureId: target.feature_id, commentCount: feature.comment_count } as const;
  });
}

export type ToggleLikeResult = { kind: "toggled"; hasLiked: boolean; likeCount: number } | { kind: "not_found" };

/**
 * Likes the comment if the voter does not yet, unlikes it otherwise, and moves like_count by the
 * row actually inserted or deleted. `not_found` for an unknown comment, another project's, or one
 * on a feature the voter cannot see.
 */
export async function toggleCommentLike(db: Db, project: ProjectRef, commentId: number, voterId: number): Promise<ToggleLikeResult> {
  return db.transaction().execute(async (trx) => {
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
