/**
 * Query behind GET /projects/{slug}/revenue/features (contract, "Revenue"): every feature of
 * the project with headcount, weighted votes, paying and churned voters, revenue and top tier,
 * aggregated and paginated in SQL (no vote is ever loaded into the process).
 *
 * Figures come from the voters' CURRENT tier and billing state, not from votes.weight (which
 * records the multiplier at voting time): the report answers "who wants this now".
 * Headcount is the stored counter features.vote_count (kept exact in the vote transaction,
 * design.md "Data rules"); a voter without a tier adds 1 to weighted_votes, so
 * weighted_votes = vote_count + sum over the feature's paying voters of (multiplier - 1), and
 * only votes of voters with a tier are ever joined.
 */
import { type RawBuilder, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import { type PageRequest, pageOffset } from "../../lib/pagination.ts";
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
 * Per feature, a sum over the votes of the project's voters with a tier (`k.amount`); the only
 * part of the query that reads votes beyond the page. It walks from those voters to their
 * votes through votes (project_id, voter_id, feature_id), index-only, so its cost follows the
 * number of votes cast by voters with a tier, not all votes. OFFSET 0 keeps the LATERAL from
 * being flattened into a hash join that would read every vote of the project (measured: about
 * 3x slower when a fifth of the voters have a tier, and no faster when most have).
 */
function perFeatureSum(projectId: number, amount: RawBuilder<unknown>, voterCondition: RawBuilder<unknown>) {
  return sql`LEFT JOIN (
      SELECT v.feature_id, sum(${amount}) AS amount
      FROM voters vr
      JOIN tiers t ON t.id = vr.tier_id
      CROSS JOIN LATERAL (
        SELECT votes.feature_id FROM votes
        WHERE votes.project_id = ${projectId} AND votes.voter_id = vr.id
        OFFSET 0
      ) v
      WHERE vr.project_id = ${projectId} AND ${voterCondition}
      GROUP BY v.feature_id
    ) k ON k.feature_id = f.id`;
}

/** The join that yields the sort key (if any) and the ORDER BY of each sort; id breaks ties. */
function ordering(projectId: number, sort: RevenueSort) {
  // Churned voters no longer pay: they are left out of mrr_cents (and so of this key).
  const revenue = () => perFeatureSum(projectId, sql`coalesce(vr.mrr_override_cents, t.mrr_cents)`, sql`NOT vr.churned`);
  const extraWeight = () => perFeatureSum(projectId, sql`t.multiplier - 1`, sql`t.multiplier > 1`);
  const weighted = sql`(f.vote_count + coalesce(k.amount, 0))`;
  switch (sort) {
    case "votes":
      return { join: sql``, order: sql`f.vote_count DESC, f.id ASC` };
    case "mrr":
      return { join: revenue(), order: sql`coalesce(k.amount, 0) DESC, f.id ASC` };
    case "weighted":
      return { join: extraWeight(), order: sql`${weighted} DESC, f.id ASC` };
    case "priority":
      // Without a usable effort (null, 0 or negative) there is no ratio: such features go last.
      return {
        join: extraWeight(),
        order: sql`CASE WHEN f.effort > 0 THEN ${weighted}::float8 / f.effort END DESC NULLS LAST, f.id ASC`,
      };
  }
}

/**
 * One page of the project's features (all of them: awaiting approval, denied and archived
 * included) with revenue figures, ordered by `sort` then id ascending, and the total count.
 *
 * Two steps in one statement: the sort key over all features picks the page (`page`), then
 * the full figures are aggregated for the page's features only, per (feature, tier) over the
 * votes of voters with a tier. paying_voters and churned_voters count voters with a tier;
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
      SELECT v.feature_id, t.id AS tier_id, t.name, t.mrr_cents AS tier_mrr,
             count(*) AS n,
             count(*) FILTER (WHERE vr.churned) AS churned_n,
             sum(coalesce(vr.mrr_override_cents, t.mrr_cents)) FILTER (WHERE NOT vr.churned) AS mrr,
             sum(t.multiplier - 1) AS extra_weight
      FROM page
      JOIN votes v ON v.feature_id = page.id
      JOIN voters vr ON vr.id = v.voter_id
      JOIN tiers t ON t.id = vr.tier_id
      GROUP BY v.feature_id, t.id
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
