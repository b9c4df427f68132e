/**
 * Fixture and checks of the owner accounts tests (voters, tiers, settings, keys). Each call
 * makes fresh anonymous tokens, so a test file may import the project several times.
 *
 * Tiers: pro (4900 cents, x3, stripe price_pro_m), biz (19900, x5, paddle pri_biz).
 * Voters: ada (pro, stripe cus_ada, company "Ada Co", email ada@example.com, anon token),
 *   bob (biz, paddle ctm_bob, SSO sub "bob-sub"), cyd (no tier, banned, anon token),
 *   dee (no tier, churned by stripe, anon token).
 * Features f1, f2, f3 in the open column. Votes: ada f1 f2, bob f1 f3, cyd f1, dee f2
 *   (weights as imported: ada 3, bob 5, others 1).
 * Comments: c1 by ada on f1 with replies r1 (bob) and r2 (cyd); c2 by bob on f2 with reply r3
 *   (ada); c3 by cyd on f3. Likes: ada likes c2 and c3, bob likes c1, cyd likes c2.
 * Message m1 dismissed by ada and bob.
 */
import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { expect } from "vitest";
import type { Db } from "../../db/connect.ts";
import type { SnapshotInput } from "../../src/admin/snapshot.schema.ts";
import { voteExponent } from "../../src/lib/rules/trending.ts";
import { counterMismatches } from "../resilience/support/invariants.ts";
import { body, type ImportedProject, type Json, type TestContext } from "./harness.ts";

export const SSO_SECRET = "owner-accounts-sso-secret-0123456789abcdef";

export interface AccountsTokens {
  ada: string;
  cyd: string;
  dee: string;
}

/** Snapshot overrides of the accounts project, and the anonymous tokens it carries. */
/** The accounts project's snapshot parts (every section it writes present, to be added to). */
export type AccountsOverrides = { project: Partial<SnapshotInput["project"]> } & Required<
  Pick<SnapshotInput, "tiers" | "voters" | "features" | "votes" | "comments" | "likes" | "messages" | "dismissals">
>;

export function accountsSnapshot(): { overrides: AccountsOverrides; tokens: AccountsTokens } {
  const tokens = { ada: anon(), cyd: anon(), dee: anon() };
  const overrides: AccountsOverrides = {
    project: { sso_secret: SSO_SECRET, currency_symbol: "€" },
    tiers: [
      { ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 3, stripe_price_ids: ["price_pro_m"] },
      { ref: "biz", name: "Business", mrr_cents: 19900, multiplier: 5, paddle_price_ids: ["pri_biz"] },
    ],
    voters: [
      {
        ref: "ada",
        kind: "anonymous",
        anon_token: tokens.ada,
        display_name: "Ada",
        email: "ada@example.com",
        company: "Ada Co",
        tier: "pro",
        stripe_customer_id: "cus_ada",
        created_at: "2026-10-01T00:00:00Z",
      },
      { ref: "bob", kind: "sso", sso_id: "bob-sub", display_name: "Bob", tier: "biz", paddle_customer_id: "ctm_bob", role: "editor" },
      { ref: "cyd", kind: "anonymous", anon_token: tokens.cyd, display_name: "Cyd", banned: true },
      {
        ref: "dee",
        kind: "anonymous",
        anon_token: tokens.dee,
        display_name: "Dee",
        churned: true,
        churned_at: "2026-09-01T00:00:00Z",
        churn_source: "stripe",
      },
    ],
    features: ["f1", "f2", "f3"].map((ref) => ({ ref, board: "roadmap", column: "c-open", heading: `Feature ${ref}` })),
    votes: [
      { voter: "ada", feature: "f1", created_at: "2026-10-01T00:00:00Z" },
      { voter: "ada", feature: "f2", created_at: "2026-10-02T00:00:00Z" },
      { voter: "bob", feature: "f1", created_at: "2026-10-03T00:00:00Z" },
      { voter: "bob", feature: "f3", created_at: "2026-10-04T00:00:00Z" },
      { voter: "cyd", feature: "f1", created_at: "2026-10-05T00:00:00Z" },
      { voter: "dee", feature: "f2", created_at: "2026-10-06T00:00:00Z" },
    ],
    comments: [
      { ref: "c1", feature: "f1", voter: "ada", content: "Ada's comment" },
      { ref: "r1", feature: "f1", voter: "bob", parent: "c1", content: "Bob replies to Ada" },
      { ref: "r2", feature: "f1", voter: "cyd", parent: "c1", content: "Cyd replies to Ada" },
      { ref: "c2", feature: "f2", voter: "bob", content: "Bob's comment" },
      { ref: "r3", feature: "f2", voter: "ada", parent: "c2", content: "Ada replies to Bob" },
      { ref: "c3", feature: "f3", voter: "cyd", content: "Cyd's comment" },
    ],
    likes: [
      { voter: "ada", comment: "c2" },
      { voter: "ada", comment: "c3" },
      { voter: "bob", comment: "c1" },
      { voter: "cyd", comment: "c2" },
    ],
    messages: [{ ref: "m1", title: "Hello", body: "World" }],
    dismissals: [
      { voter: "ada", message: "m1" },
      { voter: "bob", message: "m1" },
    ],
  };
  return { overrides, tokens };
}

function anon(): string {
  return `anon_${randomBytes(18).toString("base64url")}`;
}

/**
 * Every stored counter of the project against its rows: vote_count, weighted_score,
 * comment_count, like_count, voters' vote_count (invariants.ts), trending_score (within 1e-9),
 * the project's voter count shard by shard, and feature_tier_votes against a fresh aggregation.
 * Empty when everything is exact.
 */
export async function counterProblems(db: Db, slug: string): Promise<string[]> {
  const problems = (await counterMismatches(db, slug)).map((m) => `${m.what} ${m.id}: ${m.stored} vs ${m.actual}`);
  const { rows } = await sql<{ problem: string }>`
    WITH p AS (SELECT id FROM projects WHERE slug = ${slug}),
    fresh_trend AS (
      SELECT feature_id, max(x) + ln(sum(exp(x - mx))) AS t FROM (
        SELECT feature_id, x, max(x) OVER (PARTITION BY feature_id) AS mx FROM (
          SELECT feature_id, ${voteExponent(sql.ref("created_at"))} AS x
          FROM votes, p WHERE votes.project_id = p.id) a) b
      GROUP BY feature_id)
    SELECT 'trending ' || f.id AS problem FROM features f JOIN p ON f.project_id = p.id
      LEFT JOIN fresh_trend ft ON ft.feature_id = f.id
      WHERE (f.trending_score IS NULL) <> (ft.t IS NULL) OR abs(f.trending_score - ft.t) > 1e-9
    UNION ALL
    SELECT 'voter_count shard ' || coalesce(c.shard, d.shard) FROM
      (SELECT shard::int, voter_count FROM project_voter_counts, p WHERE project_id = p.id) c
      FULL JOIN (SELECT voter_id % 16 AS shard, count(DISTINCT voter_id)::int AS n FROM votes, p WHERE project_id = p.id GROUP BY 1) d
      ON d.shard = c.shard
      WHERE coalesce(c.voter_count, 0) <> coalesce(d.n, 0)
    UNION ALL
    SELECT 'feature_tier_votes ' || coalesce(s.feature_id, fr.feature_id) || '/' || coalesce(s.tier_id, fr.tier_id) FROM
      (SELECT feature_id, tier_id, votes, churned, billed, override_cents FROM feature_tier_votes, p
        WHERE project_id = p.id AND NOT (votes = 0 AND churned = 0 AND billed = 0 AND override_cents = 0)) s
      FULL JOIN (
        SELECT v.feature_id, vr.tier_id, count(*)::int AS votes, (count(*) FILTER (WHERE vr.churned))::int AS churned,
          (count(*) FILTER (WHERE NOT vr.churned AND vr.mrr_override_cents IS NULL))::int AS billed,
          coalesce(sum(vr.mrr_override_cents) FILTER (WHERE NOT vr.churned), 0)::bigint AS override_cents
        FROM votes v JOIN voters vr ON vr.id = v.voter_id, p
        WHERE v.project_id = p.id AND vr.tier_id IS NOT NULL GROUP BY v.feature_id, vr.tier_id) fr
      ON fr.feature_id = s.feature_id AND fr.tier_id = s.tier_id
      WHERE s.feature_id IS NULL OR fr.feature_id IS NULL OR s.votes <> fr.votes OR s.churned <> fr.churned
        OR s.billed <> fr.billed OR s.override_cents::bigint <> fr.override_cents`.execute(db);
  return [...problems, ...rows.map((row) => row.problem)];
}

/** The envelope of `response`, asserting its status (the body is shown when it differs). */
export async function expectStatus(response: Response, status: number): Promise<Json> {
  const envelope = await body(response);
  expect(response.status, JSON.stringify(envelope)).toBe(status);
  return envelope;
}

/** Imports a fresh accounts project through `ctx`: its keys, id map (`ids`: the inner map) and tokens. */
export async function importAccounts(
  ctx: Pick<TestContext, "importProject">,
): Promise<{ project: ImportedProject; ids: Json; tokens: AccountsTokens }> {
  const { overrides, tokens } = accountsSnapshot();
  const project = await ctx.importProject(overrides);
  return { project, ids: project.ids.ids, tokens };
}
