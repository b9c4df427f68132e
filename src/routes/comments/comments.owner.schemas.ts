/** Request shapes of the owner's comment routes (owner-api-v3.md, /comments). */
import { z } from "@hono/zod-openapi";
import { integerParam, MAX_ID, PageQuery } from "../../contract/params.ts";
import { NewComment } from "./comments.schemas.ts";

export const AdminCommentsQuery = z.object({
  feature_id: integerParam(1, MAX_ID)
    .optional()
    .openapi({
      param: { name: "feature_id", in: "query" },
      type: "integer",
      description: "Only comments on this feature (public or not); a feature the project lacks matches nothing",
      example: 41,
    }),
  voter_id: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .openapi({
      param: { name: "voter_id", in: "query" },
      description: "Only comments written by this voter (voter_id); an unknown one matches nothing",
      example: "v_3k9x2m",
    }),
  ...PageQuery,
});

/** NewComment plus the author, who must be a voter of the project with role owner or editor. */
export const AdminNewComment = NewComment.extend({
  author_voter_id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ description: "voter_id of the author: a voter whose role is owner or editor", example: "v_owner1" }),
})
  .strict()
  .openapi("AdminNewComment");
