/**
 * Handlers of the owner's comment routes (owner-api-v3.md): CommentObject as seen by no voter
 * (has_liked and is_own false), counts as if every show_* setting were on.
 */
import { page, success } from "../../lib/http/envelope.ts";
import { notFound, validationError } from "../../lib/http/errors.ts";
import { pageMeta } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { ownerCommentObject } from "./comments.mapper.ts";
import { findStaffVoter, listProjectComments } from "./comments.owner.repository.ts";
import type * as routes from "./comments.owner.routes.ts";
import { createComment, deleteCommentThread } from "./comments.writes.repository.ts";

export const adminListComments: AppRouteHandler<typeof routes.adminListComments> = async (c) => {
  const query = c.req.valid("query");
  const paging = { page: query.page, per_page: query.per_page };
  const { rows, total } = await listProjectComments(
    c.get("deps").db,
    c.get("project").id,
    { featureId: query.feature_id, voterPublicId: query.voter_id },
    paging,
  );
  return c.json(page(rows.map(ownerCommentObject), pageMeta(paging, total)), 200);
};

export const adminCreateComment: AppRouteHandler<typeof routes.adminCreateComment> = async (c) => {
  const { id } = c.req.valid("param");
  const { content, parent_id, author_voter_id } = c.req.valid("json");
  const { db } = c.get("deps");
  const project = c.get("project");
  const author = await findStaffVoter(db, project.id, author_voter_id);
  if (!author) throw validationError("author_voter_id", "author_voter_id must be a voter of this project whose role is owner or editor");
  const result = await createComment(db, {
    projectId: project.id,
    featureId: id,
    voterId: author.id,
    content,
    parentId: parent_id ?? null,
  });
  if (result.kind === "no_feature") throw notFound("feature");
  if (result.kind === "bad_parent")
    throw validationError("parent_id", "parent_id must be the id of a top-level comment on the same feature");
  return c.json(success(ownerCommentObject(result.row)), 201);
};

export const adminDeleteComment: AppRouteHandler<typeof routes.adminDeleteComment> = async (c) => {
  const { cid } = c.req.valid("param");
  const result = await deleteCommentThread(c.get("deps").db, c.get("project").id, cid, async () => "yes");
  if (result.kind !== "deleted") throw notFound("comment");
  return c.json(success({ deleted: true, feature_id: result.featureId, comment_count: result.commentCount }), 200);
};
