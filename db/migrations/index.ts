/** Every migration, in order. Kysely's Migrator reads them from here (no filesystem scan). */
import type { Migration } from "kysely";
import * as initialSchema from "./2026-11-22T19-00-00-initial-schema.ts";
import * as revenueIndexes from "./2026-11-22T20-00-00-revenue-indexes.ts";
import * as hotPathIndexes from "./2026-11-22T21-00-00-hot-path-indexes.ts";
import * as revenueAggregates from "./2026-11-22T22-00-00-revenue-aggregates.ts";
import * as commentSortIndexes from "./2026-11-22T23-00-00-comment-sort-indexes.ts";
import * as featureSearchTable from "./2026-11-23T00-00-00-feature-search-table.ts";
import * as projectVoterCountShards from "./2026-11-23T01-00-00-project-voter-count-shards.ts";
import * as featureMerges from "./2026-11-23T10-00-00-feature-merges.ts";
import * as ownerAccounts from "./2026-11-23T11-00-00-owner-accounts.ts";
import * as events from "./2026-11-23T12-00-00-events.ts";
import * as eventMilestonesAndPublications from "./2026-11-23T12-10-00-event-milestones-and-publications.ts";
import * as webhooks from "./2026-11-23T12-20-00-webhooks.ts";
import * as billingSync from "./2026-11-23T12-30-00-billing-sync.ts";
import * as erasureScrub from "./2026-11-24T20-00-00-erasure-scrub.ts";
import * as engagement from "./2026-11-25T02-00-00-engagement.ts";
import * as emails from "./2026-11-25T02-10-00-emails.ts";
import * as featureSimilarity from "./2026-11-25T02-20-00-feature-similarity.ts";
import * as feedStatusChangesIndex from "./2026-11-25T02-25-00-feed-status-changes-index.ts";
import * as trendingRecomputeFunction from "./2026-11-27T20-00-00-trending-recompute-function.ts";
import * as featureTagIdsFunction from "./2026-11-27T23-00-00-feature-tag-ids-function.ts";
import * as similarityProjectKeys from "./2026-11-28T04-00-00-similarity-project-keys.ts";
import * as importSources from "./2026-12-07T20-00-00-import-sources.ts";
import * as imports from "./2026-12-07T21-00-00-imports.ts";

export const migrations: Record<string, Migration> = {
  "2026-11-22T19-00-00-initial-schema": initialSchema,
  "2026-11-22T20-00-00-revenue-indexes": revenueIndexes,
  "2026-11-22T21-00-00-hot-path-indexes": hotPathIndexes,
  "2026-11-22T22-00-00-revenue-aggregates": revenueAggregates,
  "2026-11-22T23-00-00-comment-sort-indexes": commentSortIndexes,
  "2026-11-23T00-00-00-feature-search-table": featureSearchTable,
  "2026-11-23T01-00-00-project-voter-count-shards": projectVoterCountShards,
  "2026-11-23T10-00-00-feature-merges": featureMerges,
  "2026-11-23T11-00-00-owner-accounts": ownerAccounts,
  "2026-11-23T12-00-00-events": events,
  "2026-11-23T12-10-00-event-milestones-and-publications": eventMilestonesAndPublications,
  "2026-11-23T12-20-00-webhooks": webhooks,
  "2026-11-23T12-30-00-billing-sync": billingSync,
  "2026-11-24T20-00-00-erasure-scrub": erasureScrub,
  "2026-11-25T02-00-00-engagement": engagement,
  "2026-11-25T02-10-00-emails": emails,
  "2026-11-25T02-20-00-feature-similarity": featureSimilarity,
  "2026-11-25T02-25-00-feed-status-changes-index": feedStatusChangesIndex,
  "2026-11-27T20-00-00-trending-recompute-function": trendingRecomputeFunction,
  "2026-11-27T23-00-00-feature-tag-ids-function": featureTagIdsFunction,
  "2026-11-28T04-00-00-similarity-project-keys": similarityProjectKeys,
  "2026-12-07T20-00-00-import-sources": importSources,
  "2026-12-07T21-00-00-imports": imports,
};
