/**
 * The contract's revenue objects ("Resources and their fields", Revenue objects):
 * RevenueVoterObject with its RevenueTierRefObject and RevenueVoteRefObject, and
 * RevenueFeatureObject. Every amount is an integer number of cents, never formatted; the
 * currency is only the project's symbol (no ISO code is stored or sent).
 */
import { z } from "@hono/zod-openapi";

export const RevenueTierRefObject = z
  .object({
    id: z.number().int().openapi({ description: "Tier id", example: 2 }),
    name: z.string().openapi({ description: "Tier name", example: "Business" }),
    mrr_cents: z.number().int().openapi({
      description: "Tier worth per month in cents; a voter with an override is worth their own amount instead",
      example: 19900,
    }),
    multiplier: z.number().int().openapi({
      description: "How many plain votes one vote of this tier counts as where votes are weighted",
      example: 5,
    }),
  })
  .openapi("RevenueTierRefObject");

export const RevenueVoteRefObject = z
  .object({
    feature_id: z.number().int().openapi({ description: "Feature the vote is on", example: 41 }),
    heading: z.string().openapi({ description: "That feature's heading", example: "Dark mode" }),
    voted_at: z.string().openapi({ description: "When the vote was cast, RFC 3339 UTC", example: "2026-10-02T09:15:00.000Z" }),
  })
  .openapi("RevenueVoteRefObject");

const timestamp = (description: string, example: string | null) =>
  z
    .string()
    .nullable()
    .openapi({ description: `${description}; RFC 3339 UTC, or null`, example });

export const RevenueVoterObject = z
  .object({
    voter_id: z.string().openapi({ description: "Public voter id, as the identity route reports it", example: "vtr_8f2c1a9b0d3e4f56" }),
    display_name: z.string().nullable().openapi({ description: "Name shown for the voter", example: "Ada Lovelace" }),
    company: z.string().nullable().openapi({ description: "Company recorded by the owner", example: "Analytical Engines Ltd" }),
    customer_id: z
      .string()
      .nullable()
      .openapi({
        description:
          "Id in the billing system (the value the customer_id filter takes): the Stripe id if the voter has one, " +
          "else the Paddle id; when the request filtered by customer_id, the id that matched; null without either",
        example: "cus_Q2w3E4r5T6",
      }),
    matched_on: z.enum(["stripe", "paddle"]).nullable().openapi({
      description: "Billing system customer_id came from (stripe or paddle); null when the voter carries neither id",
      example: "stripe",
    }),
    subscription_id: z.string().nullable().openapi({ description: "Subscription id in the billing system", example: "sub_1Pq2Rs" }),
    subscription_status: z.string().nullable().openapi({
      description: "Last status reported by the billing system, passed through uninterpreted",
      example: "active",
    }),
    subscribed_at: timestamp("When the subscription started", "2026-03-01T00:00:00.000Z"),
    trial_ends_at: timestamp("When the trial ends or ended", null),
    canceled_at: timestamp("When the subscription was canceled", null),
    churned: z.boolean().openapi({ description: "Whether the voter has left", example: false }),
    churned_at: timestamp("When the voter left", null),
    churn_source: z.string().nullable().openapi({
      description: "What recorded the departure: a billing-system name or manual",
      example: null,
    }),
    last_synced_at: timestamp("Last refresh from the billing system", "2026-11-21T04:00:00.000Z"),
    mrr_cents: z.number().int().openapi({
      description: "Monthly worth in cents: the override set on the voter, else the tier amount, else 0",
      example: 19900,
    }),
    mrr_source: z.enum(["override", "tier", "none"]).openapi({
      description: "Where mrr_cents comes from: override (amount set on the voter), tier, or none",
      example: "tier",
    }),
    currency_symbol: z.string().openapi({ description: "Project's currency symbol; no ISO code is stored or sent", example: "$" }),
    tier: z.union([RevenueTierRefObject, z.null()]).openapi({ description: "The voter's current tier, or null" }),
    vote_count: z.number().int().openapi({ description: "Total features the voter has voted for", example: 3 }),
    votes: z.array(RevenueVoteRefObject).openapi({
      description: "Votes, newest first, at most 100; compare the length with vote_count to detect cutting",
    }),
  })
  .openapi("RevenueVoterObject");

export const RevenueFeatureObject = z
  .object({
    id: z.number().int().openapi({ description: "Feature id", example: 41 }),
    heading: z.string().openapi({
      description: "Heading; this route also lists features the public board does not (awaiting approval, denied, archived)",
      example: "Dark mode",
    }),
    status: z.string().openapi({ description: "One of open, planned, in_progress, done, denied, archived", example: "planned" }),
    vote_count: z.number().int().openapi({ description: "People who voted for it", example: 12 }),
    weighted_votes: z.number().int().openapi({
      description: "Votes counted by the voters' current tier multipliers (1 for a voter without a tier)",
      example: 30,
    }),
    paying_voters: z.number().int().openapi({ description: "Voters behind it who have a tier", example: 5 }),
    churned_voters: z.number().int().openapi({ description: "Of the paying voters, how many have left", example: 1 }),
    mrr_cents: z.number().int().openapi({
      description:
        "Monthly revenue behind it in cents: each paying voter who has not churned, counted once at their override or tier amount",
      example: 44500,
    }),
    top_tier: z.string().nullable().openapi({
      description: "Name of the tier that cast most votes on it; null if no voter with a tier has voted",
      example: "Pro",
    }),
    currency_symbol: z.string().openapi({ description: "Project's currency symbol", example: "$" }),
  })
  .openapi("RevenueFeatureObject");

export type RevenueVoterObject = z.infer<typeof RevenueVoterObject>;
export type RevenueFeatureObject = z.infer<typeof RevenueFeatureObject>;
