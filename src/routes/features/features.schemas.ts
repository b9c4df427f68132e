/**
 * The features area's contract objects ("Resources and their fields", FeatureObject and its
 * request shapes. FeatureObject is exported for every area that returns features; its refs and
 * `Tag` are shared components (src/contract/schemas.ts).
 */
import { z } from "@hono/zod-openapi";
import { CHANGELOG_TYPES, FEATURE_STATUSES } from "../../contract/enums.ts";
import { extensibleEnum, integerParam } from "../../contract/params.ts";
import { BoardRef, ColumnRef, FeatureRef, ReleaseRef, Tag } from "../../contract/schemas.ts";

export { FEATURE_STATUSES };
export const FEATURE_SORTS = ["board", "top", "votes", "trending", "new", "oldest", "comments"] as const;
export type FeatureSort = (typeof FEATURE_SORTS)[number];

const timestamp = (description: string, example: string | null) =>
  z.string().openapi({ description: `${description}; RFC 3339 UTC`, example: example ?? undefined, format: "date-time" });

export const FeatureObject = z
  .object({
    id: z.number().int().openapi({ description: "Feature id, used in every path", example: 41 }),
    heading: z.string().openapi({ description: "One-line title", example: "Dark mode" }),
    description: z.string().nullable().openapi({ description: "Plain text body", example: "A dark theme for late nights" }),
    status: extensibleEnum(
      FEATURE_STATUSES,
      "One of open, planned, in_progress, done, denied, archived; tolerate added members",
      "planned",
    ),
    board: BoardRef.openapi({ description: "Board the feature is filed on" }),
    column: ColumnRef.openapi({ description: "Column of that board; id -1 is the archived column" }),
    changelog_type: z.enum(CHANGELOG_TYPES).nullable().openapi({
      description: "One of new, improvement, fix, security, breaking_change; null outside a published release",
      example: null,
    }),
    comment_count: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Comments incl. replies; null when comments are hidden", example: 4 }),
    vote_count: z.number().int().nullable().openapi({ description: "Votes; null when votes are hidden", example: 17 }),
    score: z.number().int().nullable().openapi({
      description: "Weighted total when the project weights votes, plain count otherwise; null when votes are hidden",
      example: 23,
    }),
    score_is_weighted: z
      .boolean()
      .openapi({ description: "Whether score is weighted; same for every feature of a project", example: false }),
    view_count: z.number().int().nullable().openapi({ description: "Views; null when views are hidden", example: 310 }),
    progress: z.number().int().nullable().openapi({ description: "0 to 100; null when hidden or unset", example: 40 }),
    has_voted: z.boolean().openapi({ description: "Whether the request's voter has a vote on it; false without identity", example: false }),
    is_approved: z.boolean().openapi({ description: "Review flag; false on a suggestion awaiting review", example: true }),
    is_pinned: z.boolean().openapi({ description: "Pinned features lead every ordering", example: false }),
    developer_response: z.string().nullable().openapi({ description: "Owner's plain-text answer", example: null }),
    response_is_denial: z.boolean().openapi({ description: "Whether the answer is a refusal", example: false }),
    // A union, not .nullable(): on a named component the OpenAPI generator drops the null.
    linked_feature: z
      .union([FeatureRef, z.null()])
      .openapi({ description: "Feature this one was marked a duplicate of; null if none or not public" }),
    release: z.union([ReleaseRef, z.null()]).openapi({ description: "Latest published release that shipped it; null outside one" }),
    tags: z.array(Tag).openapi({ description: "Tags on the feature, by name" }),
    start_date: timestamp("Planned start", null).nullable(),
    target_date: timestamp("Target date", null).nullable(),
    created_at: timestamp("Creation time", "2026-11-02T09:30:00.000Z"),
    updated_at: timestamp("Last change by the owner", "2026-11-20T16:05:00.000Z"),
  })
  .openapi("FeatureObject");

export type FeatureObject = z.infer<typeof FeatureObject>;

/** Body of POST /projects/{slug}/features; keys not listed are stripped, never stored. */
export const FeatureCreateBody = z
  .object({
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
      .openapi({ description: "Plain text body, up to 2000 characters", example: "Easier on the eyes at night" }),
  })
  .openapi("CreateFeatureBody");

/** similarity of a SimilarFeatureObject (engagement-api-v3.md, "Similar features"). */
export const similarityField = z.number().min(0).max(1).openapi({
  description:
    "How similar the feature is to the text, 0 to 1, 3 decimals: 1 = the same heading apart from case, surrounding white space and punctuation; at least 0.85 for the same words in another order or form, or one typo; partial matches at most 0.8",
  example: 0.912,
});

export const SimilarFeatureObject = FeatureObject.extend({ similarity: similarityField }).openapi("SimilarFeatureObject", {
  description: "Every FeatureObject field plus similarity",
});
export type SimilarFeatureObject = z.infer<typeof SimilarFeatureObject>;

/** The `limit` query parameter of the similar-feature routes: 1 to 20, default 5. */
export const similarLimitParam = integerParam(1, 20)
  .default(5)
  .openapi({ param: { name: "limit", in: "query" }, description: "How many features at most, 1 to 20", example: 5 });

/** Query of GET /projects/{slug}/features/similar. */
export const SimilarFeaturesQuery = z.object({
  q: z
    .string()
    .trim()
    .min(1)
    .max(254)
    .openapi({
      param: { name: "q", in: "query", required: true },
      description:
        "The text to compare with every feature, e.g. the heading a voter is about to suggest; 1 to 254 characters after trimming",
      example: "Dark mode",
    }),
  limit: similarLimitParam,
});
