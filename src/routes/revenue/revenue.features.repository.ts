/**
 * Query behind GET /projects/{slug}/revenue/features (contract, "Revenue"): every feature of
 * the project with headcount, weighted votes, paying and churned voters, revenue and top tier,
 * aggregated and paginated in SQL (no vote is ever loaded into the process).
 *
 * Figures come from the voters' CURRENT tier and billing state, not from votes.weight (which
 * records the multiplier at voting time): the report answers "who wants this now". They are
 * read from feature_tier_votes, per (feature, tier) sums of the voters' side kept exact by
 * triggers (migration 2026-11-22T22-00-00-revenue-aggregates), joined with the tier's current
 * amount and multiplier; no vote row is read. Headcount is the stored counter
 * features.vote_count (kept exact in the vote transaction: docs/architecture.md, "Data rules");
 * a voter
 * without a tier adds 1 to weighted_votes, so weighted_votes = vote_count + sum over the
 * feature's paying voters of (multiplier - 1).
 */
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import { type PageRequest, pageOffset } from "../../lib/http/pagination.ts";
import type { RevenueSort } from "./revenue.routes.ts";

export interface RevenueFeatureRow {
  id: number;
  heading: string;
  status: string;
  vote_count: number;
  /** bigint on the wire (a string from postgres.js); convert with Number(). */
  weighted_votes: number | string | bigint;
  paying_voters: number;
  churned_voters: number;
  /** bigint on the wire (a string from postgres.js); convert with Number(). */
  mrr_cents: number | string | bigint;
  top_tier: string | null;
}

/**
 * The project's per-feature sort keys from feature_tier_votes: a few rows per feature (one per
 * tier its voters are on), so the cost follows features x tiers, not votes. Churned voters no
 * longer pay: `billed` and `override_cents` leave them out of mrr.
 */
function perFeatureSums(projectId: number) {
  return sql`LEFT JOIN (
      SELECT ftv.feature_id,
             sum(ftv.override_cents + ftv.billed::bigint * t.mrr_cents) AS mrr,
             sum(ftv.votes::bigint * (t.multiplier - 1)) AS extra_weight
      FROM feature_tier_votes ftv
      JOIN tiers t ON t.id = ftv.tier_id
      WHERE ftv.project_id = ${projectId}
      GROUP BY ftv.feature_id
    ) k ON k.feature_id = f.id`;
}

/** The join that yields the sort key (if any) and the ORDER BY of each sort; id breaks ties. */
function ordering(projectId: number, sort: RevenueSort) {
  const weighted = sql`(f.vote_count + coalesce(k.extra_weight, 0))`;
  switch (sort) {
    case "votes":
      return { join: sql``, order: sql`f.vote_count DESC, f.id ASC` };
    case "mrr":
      return { join: perFeatureSums(projectId), order: sql`coalesce(k.mrr, 0) DESC, f.id ASC` };
    case "weighted":
      return { join: perFeatureSums(projectId), order: sql`${weighted} DESC, f.id ASC` };
    case "priority":
      // Without a usable effort (null, 0 or negative) there is no ratio: such features go last.
      return {
        join: perFeatureSums(projectId),
        order: sql`CASE WHEN f.effort > 0 THEN ${weighted}::float8 / f.effort END DESC NULLS LAST, f.id ASC`,
      };
  }
}

/**
 * One page of the project's features (all of them: awaiting approval, denied and archived
 * included) with revenue figures, ordered by `sort` then id ascending, and the total count.
 *
 * Two steps in one statement: the sort key over all features picks the page (`page`), then
 * the full figures are summed for the page's features only from their feature_tier_votes
 * rows. paying_voters and churned_voters count voters with a tier;
 * mrr_cents sums their override or tier amount, leaving out churned voters (they no longer
 * pay) who still count everywhere else. top_tier is the tier with most votes (ties: higher
 * tier mrr_cents, then lower tier id). Amounts are integer cents.
 */
export async function listRevenueFeatures(db: Db, projectId: number, sort: RevenueSort, request: PageRequest) {
  const { join, order } = ordering(projectId, sort);
  const result = await sql<RevenueFeatureRow>`
    WITH page AS (
      SELECT id, heading, status, vote_count, pos FROM (
        SELECT f.id, f.heading, f.status, f.vote_count, row_number() OVER (ORDER BY ${order}) AS pos
        FROM features f ${join}
        WHERE f.project_id = ${projectId}
      ) ranked
      ORDER BY pos
      LIMIT ${request.per_page} OFFSET ${pageOffset(request)}
    ), per_tier AS (
      SELECT ftv.feature_id, ftv.tier_id, t.name, t.mrr_cents AS tier_mrr, ftv.votes AS n,
             ftv.churned AS churned_n, ftv.override_cents + ftv.billed::bigint * t.mrr_cents AS mrr,
             ftv.votes::bigint * (t.multiplier - 1) AS extra_weight
      FROM page
      JOIN feature_tier_votes ftv ON ftv.feature_id = page.id
      JOIN tiers t ON t.id = ftv.tier_id
      WHERE ftv.votes > 0
    ), totals AS (
      SELECT feature_id, sum(n) AS paying_voters, sum(churned_n) AS churned_voters,
             coalesce(sum(mrr), 0) AS mrr_cents, sum(extra_weight) AS extra_weight,
             (array_agg(name ORDER BY n DESC, tier_mrr DESC, tier_id ASC))[1] AS top_tier
      FROM per_tier
      GROUP BY feature_id
    )
    SELECT page.id, page.heading, page.status, page.vote_count,
           (page.vote_count + coalesce(tt.extra_weight, 0))::bigint AS weighted_votes,
           coalesce(tt.paying_voters, 0)::int AS paying_voters,
           coalesce(tt.churned_voters, 0)::int AS churned_voters,
           coalesce(tt.mrr_cents, 0)::bigint AS mrr_cents,
           tt.top_tier
    FROM page
    LEFT JOIN totals tt ON tt.feature_id = page.id
    ORDER BY page.pos
  `.execute(db);
  const { total } = await db
    .selectFrom("features")
    .select(sql<number>`count(*)::int`.as("total"))
    .where("features.project_id", "=", projectId)
    .executeTakeFirstOrThrow();
  return { rows: result.rows, total };
}
