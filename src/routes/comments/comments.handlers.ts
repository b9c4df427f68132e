/**
 * Handlers of the comment routes: settings gate -> feature visibility -> repository -> mapper
 * (the listing checks visibility in its page statement).
 * Contract: "Reading a board" (comments query), "Taking part" rules 3-5, CommentObject.
 */

import type { ProjectContext } from "../../lib/http/context.ts";
import { page, success } from "../../lib/http/envelope.ts";
import { ApiError, notFound } from "../../lib/http/errors.ts";
import { pageMeta } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { requireVoter } from "../../middleware/voter.ts";
import { findVisibleFeature } from "../features/index.ts";
import { type CommentOut, toCommentObject } from "./comments.mapper.ts";
import { listCommentThreads } from "./comments.repository.ts";
import type * as routes from "./comments.routes.ts";
import { deleteOwnComment, createComment as insertComment, toggleCommentLike } from "./comments.writes.repository.ts";

/** 403 not_allowed unless every named setting is on (display.show_comments closes all routes). */
function requireSettings(project: ProjectContext, ...names: ("show_comments" | "allow_comments" | "allow_likes")[]): void {
  for (const name of names) {
    if (!project.settings[name]) {
      const what =
        name === "show_comments"
          ? "does not show comments"
          : name === "allow_comments"
            ? "does not accept comments"
            : "does not accept likes";
      throw new ApiError("not_allowed", `this project ${what}`);
    }
  }
}

export const listComments: AppRouteHandler<typeof routes.listComments> = async (c) => {
  const { id } = c.req.valid("param");
  const { page: pageNumber, per_page, sort } = c.req.valid("query");
  const { db } = c.get("deps");
  const project = c.get("project");
  const viewerId = c.get("voter")?.id ?? null;
  requireSettings(project, "show_comments");
  const paging = { page: pageNumber, per_page };
  const threads = await listCommentThreads(db, { project, featureId: id, viewerId }, sort, paging);
  if (!threads) throw notFound("feature");
  const repliesByParent = new Map<number, CommentOut[]>();
  for (const reply of threads.replies) {
    const list = repliesByParent.get(reply.parent_id!) ?? [];
    list.push(toCommentObject(reply, []));
    repliesByParent.set(reply.parent_id!, list);
  }
  const data = threads.topLevel.map((row) => toCommentObject(row, repliesByParent.get(row.id) ?? []));
  // Comments show nothing a vote changes (read-dependencies.ts).
  c.set("readDependencies", { kind: "not-votes" });
  return c.json(page(data, pageMeta(paging, threads.total)), 200);
};

export const createComment: AppRouteHandler<typeof routes.createComment> = async (c) => {
  const { id } = c.req.valid("param");
  const { content, parent_id } = c.req.valid("json");
  const { db } = c.get("deps");
  const project = c.get("project");
  const voter = requireVoter(c.get("voter"));
  requireSettings(project, "show_comments", "allow_comments");
  if (voter.banned) throw new ApiError("voter_banned", "this voter may not comment");
  if (!(await findVisibleFeature(db, project, id, voter.id))) throw notFound("feature");

  const result = await insertComment(db, {
    projectId: project.id,
    featureId: id,
    voterId: voter.id,
    content,
    parentId: parent_id ?? null,
  });
  if (result.kind === "no_feature") throw notFound("feature");
  if (result.kind === "bad_parent") {
    throw new ApiError("validation_failed", "parent_id must be the id of a top-level comment on the same feature", { field: "parent_id" });
  }
  return c.json(success(toCommentObject(result.row, [])), 201);
};

export const deleteComment: AppRouteHandler<typeof routes.deleteComment> = async (c) => {
  const { cid } = c.req.valid("param");
  const project = c.get("project");
  requireSettings(project, "show_comments");
  const result = await deleteOwnComment(c.get("deps").db, project, cid, requireVoter(c.get("voter")).id);
  if (result.kind === "not_found") throw notFound("comment");
  if (result.kind === "not_own") throw new ApiError("not_allowed", "only the comment's author may delete it");
  return c.json(
    success({
      deleted: true,
      feature_id: result.featureId,
      // The route is closed when comments are hidden, so this is never null in practice.
      comment_count: project.settings.show_comments ? result.commentCount : null,
    }),
    200,
  );
};

export const toggleLike: AppRouteHandler<typeof routes.toggleLike> = async (c) => {
  const { cid } = c.req.valid("param");
  const project = c.get("project");
  requireSettings(project, "show_comments", "allow_likes");
  // Banned voters may like (contract, "Taking part" rule 4).
  const result = await toggleCommentLike(c.get("deps").db, project, cid, requireVoter(c.get("voter")).id);
  if (result.kind === "not_found") throw notFound("comment");
  return c.json(success({ comment_id: cid, has_liked: result.hasLiked, like_count: result.likeCount }), 200);
};
