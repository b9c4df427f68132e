/**
 * Hand-computed fixture of the revenue tests. Tiers: Pro 4900 x3, Business 19900 x5, Legacy
 * 4900 x2 (same amount as Pro, higher id: exercises the top_tier id tie-break).
 *
 * Voters (creation order) and their worth:
 *   ada  Pro,      stripe cus_ada                   4900 tier
 *   bob  Business, paddle ctm_bob, override 15000   15000 override
 *   cyd  Pro,      stripe cus_cyd + paddle ctm_cyd  4900 tier, CHURNED
 *   dee  no tier, no billing id                     0 none
 *   eve  Business, paddle ctm_eve                   19900 tier, CHURNED
 *   fay  no tier, override 2500                     2500 override (not a paying voter on features)
 *   hal  Legacy                                     4900 tier
 *
 * Features (creation order), voters, and the expected figures
 * (vote_count, weighted_votes, paying, churned, mrr_cents, top_tier):
 *   f1 Dark mode   planned, effort 4     dee fay            2  2  0 0     0 null
 *   f2 SSO login   open, NOT approved, 5 ada bob cyd dee    4 12  3 1 19900 Pro (2 vs 1)
 *   f3 CSV export  denied, effort null   ada eve            2  8  2 1  4900 Business (1-1, higher mrr)
 *   f4 Old idea    archived, effort 0    bob eve            2 10  2 1 15000 Business
 *   f5 Webhooks    planned, effort 1     cyd dee fay        3  5  1 1     0 Pro
 *   f6 No votes    open, effort 2        -                  0  0  0 0     0 null
 *   f7 Tie break   open, effort null     ada hal            2  5  2 0  9800 Pro (1-1, same mrr, lower id)
 */
import { sql } from "kysely";
import type { Db } from "../../db/connect.ts";
import type { SnapshotInput } from "../../src/admin/snapshot.schema.ts";

type SnapshotVoter = NonNullable<SnapshotInput["voters"]>[number];
type SnapshotFeature = NonNullable<SnapshotInput["features"]>[number];

/** Snapshot parts of a revenue project: every section it writes present. */
export type RevenueParts = { project?: Partial<SnapshotInput["project"]> } & Required<
  Pick<SnapshotInput, "tiers" | "voters" | "features" | "votes">
>;

/** A feature's figures as fromScratch computes them (ids and counts as ints, top tier's name). */
export interface FeatureFigures {
  id: number;
  vote_count: number;
  weighted_votes: number;
  paying_voters: number;
  churned_voters: number;
  mrr_cents: number;
  top_tier: string | null;
}

export const FEATURE_REFS = ["f1", "f2", "f3", "f4", "f5", "f6", "f7"] as const;

const at = (day: number, hour = 0) => `2026-10-${String(day).padStart(2, "0")}T${String(hour).padStart(2, "0")}:00:00Z`;

const voter = (ref: string, fields: Partial<SnapshotVoter> = {}): SnapshotVoter => ({
  ref,
  kind: "anonymous",
  display_name: ref.toUpperCase(),
  ...fields,
});

const feature = (ref: string, heading: string, column: string | null, fields: Partial<SnapshotFeature> = {}): SnapshotFeature => ({
  ref,
  board: "roadmap",
  heading,
  ...(column === null ? {} : { column }),
  ...fields,
});

/** Snapshot overrides of the main revenue project. */
export function revenueSnapshot(project: Partial<SnapshotInput["project"]> = {}): RevenueParts {
  return {
    project: { currency_symbol: "€", ...project },
    tiers: [
      { ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 3 },
      { ref: "biz", name: "Business", mrr_cents: 19900, multiplier: 5 },
      { ref: "legacy", name: "Legacy", mrr_cents: 4900, multiplier: 2 },
    ],
    voters: [
      voter("ada", {
        display_name: "Ada",
        company: "Ada Co",
        tier: "pro",
        stripe_customer_id: "cus_ada",
        subscription_id: "sub_ada",
        subscription_status: "active",
        subscribed_at: "2026-01-01T00:00:00Z",
        last_synced_at: "2026-11-20T04:00:00Z",
      }),
      voter("bob", {
        tier: "biz",
        mrr_override_cents: 15000,
        paddle_customer_id: "ctm_bob",
        subscription_status: "trialing",
        trial_ends_at: "2026-12-01T00:00:00Z",
      }),
      voter("cyd", {
        tier: "pro",
        stripe_customer_id: "cus_cyd",
        paddle_customer_id: "ctm_cyd",
        subscription_status: "canceled",
        canceled_at: "2026-09-01T00:00:00Z",
        churned: true,
        churned_at: "2026-09-30T00:00:00Z",
        churn_source: "stripe",
      }),
      voter("dee"),
      voter("eve", {
        tier: "biz",
        paddle_customer_id: "ctm_eve",
        churned: true,
        churned_at: "2026-08-01T00:00:00Z",
        churn_source: "manual",
      }),
      voter("fay", { mrr_override_cents: 2500 }),
      voter("hal", { tier: "legacy" }),
    ],
    features: [
      feature("f1", "Dark mode", "c-planned", { effort: 4 }),
      feature("f2", "SSO login", "c-open", { is_approved: false, effort: 5 }),
      feature("f3", "CSV export", "c-denied"),
      feature("f4", "Old idea", null, { status: "archived", effort: 0 }),
      feature("f5", "Webhooks", "c-planned", { effort: 1 }),
      feature("f6", "No votes", "c-open", { effort: 2 }),
      feature("f7", "Tie break", "c-open"),
    ],
    votes: [
      // ada: newest first f3, f7, f2.
      { voter: "ada", feature: "f2", created_at: at(1) },
      { voter: "ada", feature: "f3", created_at: at(3) },
      { voter: "ada", feature: "f7", created_at: at(2) },
      { voter: "bob", feature: "f2", created_at: at(4) },
      { voter: "bob", feature: "f4", created_at: at(5) },
      { voter: "cyd", feature: "f2", created_at: at(6) },
      { voter: "cyd", feature: "f5", created_at: at(7) },
      // dee: f1 and f5 share a timestamp, so feature id decides (f5 first), then f2.
      { voter: "dee", feature: "f2", created_at: at(4, 12) },
      { voter: "dee", feature: "f1", created_at: at(9) },
      { voter: "dee", feature: "f5", created_at: at(9) },
      { voter: "eve", feature: "f3", created_at: at(10) },
      { voter: "eve", feature: "f4", created_at: at(11) },
      { voter: "fay", feature: "f1", created_at: at(12) },
      { voter: "fay", feature: "f5", created_at: at(13) },
      { voter: "hal", feature: "f7", created_at: at(14) },
    ],
  };
}

/** A project with one voter holding 105 votes (one per feature) and a light voter with two. */
export function heavyVoterSnapshot(): RevenueParts {
  const features = Array.from({ length: 105 }, (_, i) => feature(`h${i + 1}`, `Heavy ${i + 1}`, "c-open"));
  const base = Date.parse("2026-06-01T00:00:00Z");
  const votes = features.map((f, i) => ({ voter: "heavy", feature: f.ref, created_at: new Date(base + i * 60_000).toISOString() }));
  votes.push({ voter: "light", feature: "h1", created_at: "2026-07-01T00:00:00Z" });
  votes.push({ voter: "light", feature: "h105", created_at: "2026-07-02T00:00:00Z" });
  return {
    tiers: [{ ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 3 }],
    voters: [voter("heavy", { tier: "pro", stripe_customer_id: "cus_heavy" }), voter("light")],
    features,
    votes,
  };
}

/** Every feature's figures by the definitions of docs/decisions.md, straight from votes, voters and tiers. */
export async function fromScratch(db: Db, projectId: number): Promise<FeatureFigures[]> {
  const { rows } = await sql<FeatureFigures>`
    SELECT f.id, count(v.voter_id)::int AS vote_count,
           coalesce(sum(coalesce(t.multiplier, 1)) FILTER (WHERE v.voter_id IS NOT NULL), 0)::int AS weighted_votes,
           count(t.id)::int AS paying_voters,
           (count(t.id) FILTER (WHERE vr.churned))::int AS churned_voters,
           coalesce(sum(coalesce(vr.mrr_override_cents, t.mrr_cents)) FILTER (WHERE t.id IS NOT NULL AND NOT vr.churned), 0)::int AS mrr_cents,
           (SELECT tt.name FROM votes v2 JOIN voters r2 ON r2.id = v2.voter_id JOIN tiers tt ON tt.id = r2.tier_id
             WHERE v2.feature_id = f.id GROUP BY tt.id ORDER BY count(*) DESC, tt.mrr_cents DESC, tt.id ASC LIMIT 1) AS top_tier
    FROM features f
    LEFT JOIN votes v ON v.feature_id = f.id
    LEFT JOIN voters vr ON vr.id = v.voter_id
    LEFT JOIN tiers t ON t.id = vr.tier_id
    WHERE f.project_id = ${projectId}
    GROUP BY f.id ORDER BY f.id`.execute(db);
  return rows;
}
