/**
 * Comment routes (contract, "Reading a board" and "Taking part"): read a feature's threads,
 * write a comment or reply, delete one's own comment, toggle a like. All of them are closed
 * (403 not_allowed) when the project does not show comments.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent, listEnvelopeOf, notModified } from "../../contract/envelope.ts";
import { readErrors, writeErrors } from "../../contract/errors.ts";
import { idParam, SlugParam } from "../../contract/params.ts";
import { describedRoute } from "../../contract/route-description.ts";
import { sharedReadCache } from "../../middleware/shared-read-cache.ts";
import { CommentDeletedObject, CommentObject, CommentsQuery, LikeObject, NewComment } from "./comments.schemas.ts";

const FeatureParams = z.object({ slug: SlugParam, id: idParam("id", "Feature id") });
const CommentParams = z.object({ slug: SlugParam, cid: idParam("cid", "Comment id") });

export const listComments = createRoute(
  describedRoute(
    { kind: "read", voter: "optional" },
    {
      method: "get",
      path: "/projects/{slug}/features/{id}/comments",
      operationId: "listComments",
      summary: "List a feature's comments",
      description:
        "Top-level comments of the feature, paged and sorted, each with all of its replies (oldest first). " +
        "per_page and meta count top-level comments only. A voter identity is optional and only sets has_liked and is_own. " +
        "403 not_allowed when the project does not show comments; 404 for an unknown or hidden feature.",
      tags: ["Comments"],
      middleware: [sharedReadCache()] as const,
      request: { params: FeatureParams, query: CommentsQuery },
      responses: {
        200: jsonContent(listEnvelopeOf(CommentObject), "The page of top-level comments with their replies"),
        ...notModified,
        ...readErrors,
      },
    },
  ),
);

export const createComment = createRoute(
  describedRoute(
    { kind: "write" },
    {
      method: "post",
      path: "/projects/{slug}/features/{id}/comments",
      operationId: "createComment",
      summary: "Comment on a feature or reply to a comment",
      description:
        "Writes a top-level comment, or a reply when parent_id names a top-level comment of the same feature " +
        "(replies are one level deep; otherwise 422 with field parent_id). 403 not_allowed when the project does not " +
        "accept or show comments, 403 voter_banned for a banned voter, 404 for an unknown or hidden feature.",
      tags: ["Comments"],
      request: {
        params: FeatureParams,
        body: { content: { "application/json": { schema: NewComment } }, required: true, description: "The comment" },
      },
      responses: {
        201: jsonContent(envelopeOf(CommentObject), "The comment as written (replies empty)"),
        ...writeErrors,
      },
    },
  ),
);

export const deleteComment = createRoute(
  describedRoute(
    { kind: "write" },
    {
      method: "delete",
      path: "/projects/{slug}/comments/{cid}",
      operationId: "deleteComment",
      summary: "Delete one's own comment",
      description:
        "Deletes a comment the request's voter wrote; deleting a top-level comment deletes its replies too and the " +
        "feature's comment_count drops by all of them. 403 not_allowed for another voter's comment or when the project " +
        "does not show comments; 404 for an unknown comment, another project's, or one on a hidden feature.",
      tags: ["Comments"],
      request: { params: CommentParams },
      responses: {
        200: jsonContent(envelopeOf(CommentDeletedObject), "The comment is gone"),
        ...writeErrors,
      },
    },
  ),
);

export const toggleLike = createRoute(
  describedRoute(
    { kind: "write" },
    {
      method: "post",
      path: "/projects/{slug}/comments/{cid}/like",
      operationId: "toggleCommentLike",
      summary: "Like or unlike a comment",
      description:
        "Toggles the voter's like on the comment and answers the state after the toggle. Banned voters may like. " +
        "403 not_allowed when the project does not accept likes or show comments; 404 for an unknown comment or one on a hidden feature.",
      tags: ["Comments"],
      request: { params: CommentParams },
      responses: {
        200: jsonContent(envelopeOf(LikeObject), "The like state after the toggle"),
        ...writeErrors,
      },
    },
  ),
);
