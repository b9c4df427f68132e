/**
 * Owner routes of the comments area (owner-api-v3.md, "Routes"): read every comment, comment as
 * the project (author_role owner or editor), delete any comment. Display settings do not apply.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent, listEnvelopeOf, notModified } from "../../contract/envelope.ts";
import {
  OWNER_PATH,
  OwnerSlugParams,
  ownerDeleteRoute,
  ownerReadErrors,
  ownerRoute,
  ownerWriteErrors,
} from "../../contract/owner-routes.ts";
import { idParam, SlugParam } from "../../contract/params.ts";
import { AdminCommentsQuery, AdminNewComment } from "./comments.owner.schemas.ts";
import { CommentDeletedObject, CommentObject } from "./comments.schemas.ts";

export const adminListComments = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/comments`,
    operationId: "adminListComments",
    summary: "List every comment (owner)",
    description:
      "Comments of the project, newest first, replies included as rows of their own (their `replies` is empty), on any feature public or not; filter by feature_id and voter_id.",
    request: { params: OwnerSlugParams, query: AdminCommentsQuery },
    responses: { 200: jsonContent(listEnvelopeOf(CommentObject), "One page of comments with Meta"), ...notModified, ...ownerReadErrors },
  }),
);

export const adminCreateComment = createRoute(
  ownerRoute({
    method: "post",
    path: `${OWNER_PATH}/features/{id}/comments`,
    operationId: "adminCreateComment",
    summary: "Comment as the project (owner)",
    description:
      "Writes a comment (or a reply with parent_id) on any feature, in the name of author_voter_id: a voter of the project whose role is owner or editor (else 422 author_voter_id). Display and comment settings do not apply.",
    request: {
      params: z.object({ slug: SlugParam, id: idParam("id", "Feature id") }),
      body: { content: { "application/json": { schema: AdminNewComment } }, required: true, description: "The comment" },
    },
    responses: { 201: jsonContent(envelopeOf(CommentObject), "The comment, author_role set"), ...ownerWriteErrors },
  }),
);

export const adminDeleteComment = ownerDeleteRoute({
  path: `${OWNER_PATH}/comments/{cid}`,
  operationId: "adminDeleteComment",
  summary: "Delete any comment (owner)",
  description:
    "Deletes a comment of the project, with its replies when it is a top-level one; the feature's comment_count drops by all of them.",
  params: z.object({ slug: SlugParam, cid: idParam("cid", "Comment id") }),
  deleted: CommentDeletedObject,
  gone: "The comment is gone",
});
