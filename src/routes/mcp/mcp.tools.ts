/**
 * The tools of the MCP endpoint, one entry each (engagement-api-v3.md, "MCP endpoint", the tools
 * table). Each names the route it wraps; its arguments are that route's own query or body
 * schemas (plus the path ids under argument names), and it runs by calling the route in process,
 * so checks, transactions, events, notifications and rate budgets are the route's.
 */
import { z } from "@hono/zod-openapi";
import { type AdminReleaseObject, adminGetRelease, adminUpdateRelease } from "../changelog/index.ts";
import { adminCreateComment, adminListComments } from "../comments/index.ts";
import { adminListEvents } from "../events/index.ts";
import {
  adminGetFeature,
  adminListFeatures,
  adminListSimilarFeatures,
  adminMergeFeature,
  adminUpdateFeature,
  findSimilarAdminFeatures,
  SimilarFeaturesQuery,
} from "../features/index.ts";
import { listRevenueFeatures } from "../revenue/index.ts";
import { bodyShape, defineTool, IdempotencyKeyArgument, pathArgument, queryShape, type ToolDefinition, without } from "./mcp.tool-kit.ts";

const readOnly = { readOnlyHint: true, openWorldHint: false } as const;

export const searchFeatures = defineTool({
  name: "search_features",
  title: "Search features",
  description:
    "Lists the project's features, public or not (awaiting review, denied, archived, merged), filtered by status, " +
    "approval, board, column, tags and free text, sorted, one page at a time. Changes nothing. Answers {items: " +
    "AdminFeatureObject[], meta}.",
  wraps: adminListFeatures,
  pathArguments: {},
  arguments: z.object(queryShape(adminListFeatures)).strict(),
  annotations: readOnly,
  run: (args, runtime) => runtime.call(adminListFeatures, { query: args }),
});

export const getFeature = defineTool({
  name: "get_feature",
  title: "Get a feature",
  description:
    "One feature by id, public or not (AdminFeatureObject), with `comments`: the first page of its comments, newest " +
    "first, replies included. Changes nothing.",
  wraps: adminGetFeature,
  pathArguments: { id: "feature_id" },
  arguments: z.object({ feature_id: pathArgument(adminGetFeature, "id", "The feature's id") }).strict(),
  annotations: readOnly,
  run: async ({ feature_id }, runtime) => {
    const feature = await runtime.call(adminGetFeature, { params: { id: feature_id } });
    if (!feature.ok) return feature;
    const comments = await runtime.call(adminListComments, { query: { feature_id } });
    if (!comments.ok) return comments;
    return { ...feature, data: { ...(feature.data as object), comments: comments.data } };
  },
});

/** Exactly one of q and feature_id (engagement-api-v3.md: both or neither is validation_failed naming q). */
function oneTarget(args: { q?: string; feature_id?: number }, ctx: z.RefinementCtx): void {
  if ((args.q === undefined) === (args.feature_id === undefined)) {
    ctx.addIssue({ code: "custom", path: ["q"], message: "give exactly one of q and feature_id" });
  }
}

export const findSimilarFeatures = defineTool({
  name: "find_similar_features",
  title: "Find similar features",
  description:
    "Merge candidates: the project's features (public or not; merged duplicates left out) most similar to the " +
    "heading of feature feature_id (itself left out) or to a text q, by words and character trigrams, each with " +
    "similarity (0 to 1, at least 0.3), highest first. Give exactly one of q and feature_id. Changes nothing. " +
    "Answers {items: AdminFeatureObject plus similarity, meta: null}.",
  wraps: adminListSimilarFeatures,
  pathArguments: { id: "feature_id" },
  arguments: z
    .object({
      // The public similar route's own q (its rule: 1 to 254 characters after trimming).
      q: SimilarFeaturesQuery.shape.q
        .optional()
        .openapi({ description: "A text to compare with every feature, 1 to 254 characters after trimming; instead of feature_id" }),
      feature_id: pathArgument(adminListSimilarFeatures, "id", "The feature whose duplicates to find; instead of q").optional(),
      ...queryShape(adminListSimilarFeatures),
    })
    .strict()
    .superRefine(oneTarget),
  annotations: readOnly,
  run: ({ q, feature_id, limit }, runtime) =>
    feature_id !== undefined
      ? runtime.call(adminListSimilarFeatures, { params: { id: feature_id }, query: { limit } })
      : runtime.read(({ db, project, now }) => findSimilarAdminFeatures(db, project, { q: q as string }, limit, now)),
});

export const listEvents = defineTool({
  name: "list_events",
  title: "List events",
  description:
    "The project's events feed, oldest first: every recorded change (features, votes, comments, releases, voters, " +
    "webhooks), filtered by type, or only those after a given event id. Changes nothing. Answers {items: " +
    "EventObject[], meta}.",
  wraps: adminListEvents,
  pathArguments: {},
  arguments: z.object(queryShape(adminListEvents)).strict(),
  annotations: readOnly,
  run: (args, runtime) => runtime.call(adminListEvents, { query: args }),
});

export const revenueByFeature = defineTool({
  name: "revenue_by_feature",
  title: "Revenue by feature",
  description:
    "Every feature with the revenue behind it: headcount, weighted votes, paying and churned voters, monthly " +
    "revenue in cents and the top tier, sorted by mrr, votes, weighted or priority. Changes nothing. Answers " +
    "{items, meta}.",
  wraps: listRevenueFeatures,
  pathArguments: {},
  arguments: z.object(queryShape(listRevenueFeatures)).strict(),
  annotations: readOnly,
  run: (args, runtime) => runtime.call(listRevenueFeatures, { query: args }),
});

export const updateFeature = defineTool({
  name: "update_feature",
  title: "Update a feature",
  description:
    "Changes the fields given of one feature, as the owner: heading, description, board and column, status, " +
    "approval, pin, position, progress, effort, developer response, tags, dates, author. Absent fields stay; null " +
    "clears a nullable one. Records feature.updated and notifies the feature's subscribers as the owner's PATCH " +
    "does. Answers the feature after the change.",
  wraps: adminUpdateFeature,
  pathArguments: { id: "feature_id" },
  arguments: z
    .object({
      feature_id: pathArgument(adminUpdateFeature, "id", "The feature to change"),
      ...bodyShape(adminUpdateFeature),
      idempotency_key: IdempotencyKeyArgument,
    })
    .strict(),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  run: (args, runtime) =>
    runtime.call(adminUpdateFeature, { params: { id: args.feature_id }, body: without(args, "feature_id", "idempotency_key") }),
});

export const mergeFeatures = defineTool({
  name: "merge_features",
  title: "Merge a duplicate",
  description:
    "Merges feature feature_id (the duplicate) into into_id: its votes move to into_id (a voter with both keeps " +
    "one), the duplicate is archived with merged_into set; comments stay. Undo only through the owner API's " +
    "unmerge. Answers the target after the merge.",
  wraps: adminMergeFeature,
  pathArguments: { id: "feature_id" },
  arguments: z
    .object({
      feature_id: pathArgument(adminMergeFeature, "id", "The duplicate, merged into into_id"),
      ...bodyShape(adminMergeFeature),
      idempotency_key: IdempotencyKeyArgument,
    })
    .strict(),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  run: (args, runtime) =>
    runtime.call(adminMergeFeature, { params: { id: args.feature_id }, body: without(args, "feature_id", "idempotency_key") }),
});

export const replyAsTeam = defineTool({
  name: "reply_as_team",
  title: "Reply as the team",
  description:
    "Writes a comment on a feature (or a reply to one of its top-level comments, parent_id) in the name of " +
    "author_voter_id, a voter of the project whose role is owner or editor; visible on the public board, and its " +
    "subscribers are notified. Answers the comment.",
  wraps: adminCreateComment,
  pathArguments: { id: "feature_id" },
  arguments: z
    .object({
      feature_id: pathArgument(adminCreateComment, "id", "The feature to comment on"),
      ...bodyShape(adminCreateComment),
      idempotency_key: IdempotencyKeyArgument,
    })
    .strict(),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  run: (args, runtime) =>
    runtime.call(adminCreateComment, { params: { id: args.feature_id }, body: without(args, "feature_id", "idempotency_key") }),
});

export const publishRelease = defineTool({
  name: "publish_release",
  title: "Publish a release",
  description:
    "Publishes a draft or scheduled release now (published_at = now): it appears in the public changelog and " +
    "release.published is recorded. A release already public is returned unchanged. Answers the release.",
  wraps: adminUpdateRelease,
  pathArguments: { id: "release_id" },
  notArguments: {
    published_at: "set to now by the tool",
    name: "publishing changes nothing else",
    slug: "publishing changes nothing else",
    body: "publishing changes nothing else",
    is_featured: "publishing changes nothing else",
    features: "publishing changes nothing else",
  },
  arguments: z
    .object({
      release_id: pathArgument(adminUpdateRelease, "id", "The release to publish"),
      idempotency_key: IdempotencyKeyArgument,
    })
    .strict(),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: async ({ release_id }, runtime) => {
    const release = await runtime.call(adminGetRelease, { params: { id: release_id } });
    if (!release.ok || (release.data as AdminReleaseObject).status === "published") return release;
    return runtime.call(adminUpdateRelease, { params: { id: release_id }, body: { published_at: runtime.now().toISOString() } });
  },
});

/** Every tool, in the order tools/list gives them. */
export const MCP_TOOLS: readonly ToolDefinition[] = [
  searchFeatures,
  getFeature,
  findSimilarFeatures,
  listEvents,
  revenueByFeature,
  updateFeature,
  mergeFeatures,
  replyAsTeam,
  publishRelease,
] as unknown as readonly ToolDefinition[];
