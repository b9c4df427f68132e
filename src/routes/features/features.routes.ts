/** Route definitions of the features area (contract, "Reading a board" and "Taking part"). */
import { createRoute, z } from "@hono/zod-openapi";
import { FEATURE_STATUSES } from "../../contract/enums.ts";
import { envelopeOf, jsonContent, listEnvelopeOf, notModified } from "../../contract/envelope.ts";
import { readErrors, writeErrors } from "../../contract/errors.ts";
import { idParam, integerParam, MAX_ID, PageQuery, repeatedParam, SlugParam } from "../../contract/params.ts";
import { describedRoute } from "../../contract/route-description.ts";
import { sharedReadCache } from "../../middleware/shared-read-cache.ts";
import { withVoterVotes } from "./features.personalize.ts";
import { FEATURE_SORTS, FeatureCreateBody, FeatureObject, SimilarFeatureObject, SimilarFeaturesQuery } from "./features.schemas.ts";

export const FeatureListQuery = z.object({
  sort: z
    .enum(FEATURE_SORTS)
    .default("top")
    .openapi({
      param: { name: "sort", in: "query" },
      description:
        "board = owner's order; top = the project's score (weighted if it weights votes); votes = plain headcount; trending = recent votes weigh more; new; oldest; comments. Pinned features lead every order",
      example: "top",
    }),
  board: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .openapi({
      param: { name: "board", in: "query" },
      description: "Custom board slug; omit or send roadmap for the roadmap",
      example: "roadmap",
    }),
  column: integerParam(-1, MAX_ID)
    .optional()
    .openapi({
      param: { name: "column", in: "query" },
      type: "integer",
      description: "Column id of that board from the project document; -1 = archived column (only when shown)",
      example: 12,
    }),
  scope: z
    .enum(["project"])
    .optional()
    .openapi({
      param: { name: "scope", in: "query" },
      description: "project: every public feature regardless of board; not combinable with board or column",
      example: "project",
    }),
  tag: repeatedParam(integerParam(1, MAX_ID))
    .optional()
    .openapi({
      param: { name: "tag", in: "query", style: "form", explode: true },
      description: "Tag id; repeat to match any of several",
      example: [3],
    }),
  status: repeatedParam(z.enum(FEATURE_STATUSES))
    .optional()
    .openapi({
      param: { name: "status", in: "query", style: "form", explode: true },
      description: "Status; repeat to match any of several. denied matches nothing while the project hides denied features",
      example: ["planned", "in_progress"],
    }),
  q: z
    .string()
    .max(200)
    .optional()
    .openapi({
      param: { name: "q", in: "query" },
      description: "Free text, case-insensitive substring of heading or description; at most 200 characters",
      example: "dark",
    }),
  ...PageQuery,
});

const slugParams = z.object({ slug: SlugParam });
const featureParams = z.object({ slug: SlugParam, id: idParam("id", "Feature id") });

export const listFeatures = createRoute(
  describedRoute(
    { kind: "read", voter: "optional" },
    {
      method: "get",
      path: "/projects/{slug}/features",
      operationId: "listFeatures",
      summary: "List features",
      description:
        "Public features of a board (default the roadmap), a column of it, or the whole project, filtered and sorted, one page at a time. A suggestion awaiting review is never listed.",
      tags: ["Features"],
      middleware: [sharedReadCache({ personalize: withVoterVotes, personalizeAlways: true })] as const,
      request: { params: slugParams, query: FeatureListQuery },
      responses: {
        200: jsonContent(listEnvelopeOf(FeatureObject), "One page of features with Meta"),
        ...notModified,
        ...readErrors,
      },
    },
  ),
);

/**
 * Registered before getFeature (src/routes/features/index.ts) so that `/features/similar` is
 * not read as a feature id. Readers with an identity bypass the shared read cache: they also
 * see their own suggestions awaiting review (engagement-api-v3.md, "Common rules").
 */
export const listSimilarFeatures = createRoute(
  describedRoute(
    { kind: "read", voter: "optional" },
    {
      method: "get",
      path: "/projects/{slug}/features/similar",
      operationId: "listSimilarFeatures",
      summary: "Find features similar to a text",
      description:
        "The features a voter about to suggest `q` should see first: visible features (and the voter's own suggestions) with a similarity of at least 0.3, highest first, then by vote_count; merged duplicates never. 422 naming q or limit.",
      tags: ["Features"],
      middleware: [sharedReadCache()] as const,
      request: { params: slugParams, query: SimilarFeaturesQuery },
      responses: {
        200: jsonContent(envelopeOf(z.array(SimilarFeatureObject)), "The similar features (meta null)"),
        ...notModified,
        ...readErrors,
      },
    },
  ),
);

export const getFeature = createRoute(
  describedRoute(
    { kind: "read", voter: "optional" },
    {
      method: "get",
      path: "/projects/{slug}/features/{id}",
      operationId: "getFeature",
      summary: "Get a feature",
      description: "One feature by id. A suggestion awaiting review is shown only to its author; hidden features answer 404.",
      tags: ["Features"],
      middleware: [sharedReadCache({ personalize: withVoterVotes })] as const,
      request: { params: featureParams },
      responses: {
        200: jsonContent(envelopeOf(FeatureObject), "The feature"),
        ...notModified,
        ...readErrors,
      },
    },
  ),
);

export const createFeature = createRoute(
  describedRoute(
    { kind: "write" },
    {
      method: "post",
      path: "/projects/{slug}/features",
      operationId: "createFeature",
      summary: "Suggest a feature",
      description:
        "Files a suggestion on the roadmap's first open column, awaiting review (is_approved false): listed to nobody, visible by id to its author. 403 not_allowed when the project takes no suggestions, voter_banned for a banned voter.",
      tags: ["Features"],
      request: {
        params: slugParams,
        body: { content: { "application/json": { schema: FeatureCreateBody } }, required: true },
      },
      responses: {
        201: jsonContent(envelopeOf(FeatureObject), "The suggestion as created"),
        ...writeErrors,
      },
    },
  ),
);
