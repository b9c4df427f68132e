/**
 * The features area's owner shapes (owner-api-v3.md, "Objects" AdminFeatureObject and the
 * /features routes): the object, the list query, and the POST / PATCH / merge bodies.
 */
import { z } from "@hono/zod-openapi";
import { FEATURE_STATUSES } from "../../contract/enums.ts";
import { patchBodyOf } from "../../contract/owner-routes.ts";
import { booleanParam, integerParam, MAX_ID, PageQuery, repeatedParam } from "../../contract/params.ts";
import { FeatureRef } from "../../contract/schemas.ts";
import { FeatureObject, similarityField, similarLimitParam } from "./features.schemas.ts";

export const ADMIN_FEATURE_SORTS = ["new", "oldest", "top", "votes", "board"] as const;

export const AdminFeatureObject = FeatureObject.extend({
  is_public: z.boolean().openapi({
    description: "Whether the public board lists it now (approval gate in the suggestions column, hidden denied/archived columns)",
    example: true,
  }),
  position: z.number().int().openapi({ description: "Owner's order for sort=board", example: 3 }),
  effort: z.number().int().nullable().openapi({ description: "Effort estimate used by revenue/features?sort=priority", example: 5 }),
  author_voter_id: z.string().nullable().openapi({ description: "Voter who suggested it (voter_id), or null", example: "v_3k9x2m" }),
  weighted_score: z.number().int().openapi({ description: "Sum of vote weights, whatever score_is_weighted says", example: 23 }),
  merged_into: z.union([FeatureRef, z.null()]).openapi({ description: "Feature this one is merged into (see merge), or null" }),
}).openapi("AdminFeatureObject", {
  description:
    "Every FeatureObject field as if every show_* setting were true (counts never null) and has_voted false, plus the owner's fields",
});

export type AdminFeatureObject = z.infer<typeof AdminFeatureObject>;

export const AdminFeatureListQuery = z.object({
  status: repeatedParam(z.enum(FEATURE_STATUSES))
    .optional()
    .openapi({
      param: { name: "status", in: "query", style: "form", explode: true },
      description: "Status; repeat to match any of several",
      example: ["open"],
    }),
  approved: booleanParam()
    .optional()
    .openapi({
      param: { name: "approved", in: "query" },
      description: "true: approved features only; false: those awaiting review only",
      example: false,
    }),
  board: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .openapi({
      param: { name: "board", in: "query" },
      description: "Board slug (roadmap for the roadmap); omitted: every board",
      example: "roadmap",
    }),
  column: integerParam(-1, MAX_ID)
    .optional()
    .openapi({
      param: { name: "column", in: "query" },
      type: "integer",
      description: "Column id (of `board` when given, else of any board of the project); -1 = archived features",
      example: 12,
    }),
  tag: repeatedParam(integerParam(1, MAX_ID))
    .optional()
    .openapi({
      param: { name: "tag", in: "query", style: "form", explode: true },
      description: "Tag id; repeat to match any of several",
      example: [3],
    }),
  q: z
    .string()
    .max(200)
    .optional()
    .openapi({
      param: { name: "q", in: "query" },
      description: "Free text, case-insensitive substring of heading or description",
      example: "dark",
    }),
  sort: z
    .enum(ADMIN_FEATURE_SORTS)
    .default("new")
    .openapi({
      param: { name: "sort", in: "query" },
      description: "new (default), oldest, top (the project's score), votes (headcount), board (owner's order); pinned first",
      example: "new",
    }),
  ...PageQuery,
});

const dateTime = (description: string) =>
  z.iso
    .datetime({ offset: true })
    .nullable()
    .openapi({ description: `${description}; RFC 3339, null clears`, example: "2026-12-01T00:00:00Z" });

/** The fields of POST /features; PATCH takes any of them (patchBodyOf). */
const featureFields = {
  heading: z
    .string()
    .trim()
    .min(1)
    .max(254)
    .openapi({ description: "One-line title, 1 to 254 characters after trimming", example: "Dark mode" }),
  description: z
    .string()
    .trim()
    .max(2000)
    .nullable()
    .openapi({ description: "Plain text body, up to 2000 characters", example: "Easier on the eyes" }),
  board: z
    .string()
    .min(1)
    .max(100)
    .openapi({ description: "Board slug (default roadmap); a move to another board sends column_id too", example: "roadmap" }),
  column_id: integerParam(-1, MAX_ID).openapi({
    type: "integer",
    description: "Column of that board; -1 = the archived column. On the roadmap the column decides the status",
    example: 12,
  }),
  status: z.enum(FEATURE_STATUSES).openapi({
    description: "On the roadmap alone: moves to the first column with that status; archived: the archived column",
    example: "planned",
  }),
  is_approved: z
    .boolean()
    .openapi({ description: "Review flag (default true); false takes a suggestion off public listings", example: true }),
  is_pinned: z.boolean().openapi({ description: "Pinned features lead every ordering", example: false }),
  position: z
    .number()
    .int()
    .min(0)
    .max(MAX_ID)
    .openapi({ description: "Owner's order for sort=board (default: after the board's last)", example: 3 }),
  progress: z.number().int().min(0).max(100).nullable().openapi({ description: "0 to 100, or null", example: 40 }),
  effort: z.number().int().min(0).max(1_000_000).nullable().openapi({ description: "Effort estimate, or null", example: 5 }),
  developer_response: z
    .string()
    .max(5000)
    .nullable()
    .openapi({ description: "Owner's plain-text answer, up to 5000 characters", example: null }),
  response_is_denial: z.boolean().openapi({ description: "Whether the answer is a refusal", example: false }),
  tag_ids: z
    .array(integerParam(1, MAX_ID))
    .max(100)
    .openapi({ description: "Tags of the project (replaces the feature's tags)", example: [3] }),
  start_date: dateTime("Planned start"),
  target_date: dateTime("Target date"),
  author_voter_id: z
    .string()
    .min(1)
    .max(100)
    .nullable()
    .openapi({ description: "Voter who suggested it (voter_id), or null", example: null }),
};

export const AdminFeatureCreateBody = z
  .object(featureFields)
  .partial()
  .required({ heading: true })
  .strict()
  .openapi("AdminFeatureCreateBody");
export const AdminFeaturePatchBody = patchBodyOf(featureFields).openapi("AdminFeaturePatchBody");
export type AdminFeaturePatchBody = z.infer<typeof AdminFeaturePatchBody>;

export const FeatureMergeBody = z
  .object({ into_id: z.number().int().min(1).max(MAX_ID).openapi({ description: "The feature that keeps the votes", example: 40 }) })
  .strict()
  .openapi("MergeBody");

export const SimilarAdminFeatureObject = AdminFeatureObject.extend({ similarity: similarityField }).openapi("SimilarAdminFeatureObject", {
  description: "Every AdminFeatureObject field plus similarity",
});
export type SimilarAdminFeatureObject = z.infer<typeof SimilarAdminFeatureObject>;

/** Query of GET /admin/features/{id}/similar. */
export const SimilarAdminFeaturesQuery = z.object({ limit: similarLimitParam });
