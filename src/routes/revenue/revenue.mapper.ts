/** Rows -> the revenue objects (contract, "Revenue objects"). */
import { rfc3339OrNull } from "../../lib/http/timestamps.ts";
import type { RevenueFeatureRow } from "./revenue.features.repository.ts";
import type { RevenueFeatureObject, RevenueVoterObject } from "./revenue.schemas.ts";
import type { RevenueVoterRow, VoteRefRow } from "./revenue.voters.repository.ts";

/**
 * Which billing id to report: with a customer_id filter, the column that matched (Stripe first
 * if both carry it); without one, the Stripe id if present, else the Paddle id.
 */
function billingId(row: RevenueVoterRow, filter: string | undefined) {
  const { stripe_customer_id: stripe, paddle_customer_id: paddle } = row;
  if (stripe !== null && (filter === undefined || stripe === filter)) return { customer_id: stripe, matched_on: "stripe" as const };
  if (paddle !== null && (filter === undefined || paddle === filter)) return { customer_id: paddle, matched_on: "paddle" as const };
  return { customer_id: null, matched_on: null };
}

/** RevenueVoterObject from a voter row and its newest votes (contract, "Revenue objects"). */
export function toRevenueVoter(
  row: RevenueVoterRow,
  votes: VoteRefRow[],
  currencySymbol: string,
  customerFilter: string | undefined,
): RevenueVoterObject {
  const tier =
    row.tier_id === null
      ? null
      : { id: row.tier_id, name: row.tier_name!, mrr_cents: row.tier_mrr_cents!, multiplier: row.tier_multiplier! };
  const mrr =
    row.mrr_override_cents !== null
      ? { mrr_cents: row.mrr_override_cents, mrr_source: "override" as const }
      : tier !== null
        ? { mrr_cents: tier.mrr_cents, mrr_source: "tier" as const }
        : { mrr_cents: 0, mrr_source: "none" as const };
  return {
    voter_id: row.public_id,
    display_name: row.display_name,
    company: row.company,
    ...billingId(row, customerFilter),
    subscription_id: row.subscription_id,
    subscription_status: row.subscription_status,
    subscribed_at: rfc3339OrNull(row.subscribed_at),
    trial_ends_at: rfc3339OrNull(row.trial_ends_at),
    canceled_at: rfc3339OrNull(row.canceled_at),
    churned: row.churned,
    churned_at: rfc3339OrNull(row.churned_at),
    churn_source: row.churn_source,
    last_synced_at: rfc3339OrNull(row.last_synced_at),
    ...mrr,
    currency_symbol: currencySymbol,
    tier,
    vote_count: row.vote_count,
    votes: votes.map((vote) => ({ feature_id: vote.feature_id, heading: vote.heading, voted_at: vote.voted_at.toISOString() })),
  };
}

/** RevenueFeatureObject from an aggregated feature row; bigint sums arrive as strings. */
export function toRevenueFeature(row: RevenueFeatureRow, currencySymbol: string): RevenueFeatureObject {
  return {
    id: row.id,
    heading: row.heading,
    status: row.status,
    vote_count: row.vote_count,
    weighted_votes: Number(row.weighted_votes),
    paying_voters: row.paying_voters,
    churned_voters: row.churned_voters,
    mrr_cents: Number(row.mrr_cents),
    top_tier: row.top_tier,
    currency_symbol: currencySymbol,
  };
}
