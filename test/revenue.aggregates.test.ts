/**
 * The stored revenue aggregates (feature_tier_votes, kept by triggers) stay exact: after voters
 * move between tiers, churn, gain or lose an override, a tier's amount or multiplier changes, a
 * tier, voter or feature is deleted, and under parallel votes, the stored rows equal a
 * from-scratch aggregation of the votes and GET /revenue/features equals the definitions of docs/decisions.md
 * computed from scratch.
 */
import { type Selectable, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FeatureTierVotesTable } from "../db/schema.ts";
import { type Answer, body, createTestContext, type ImportedProject, type TestContext, uniqueSlug } from "./support/harness.ts";
import { fromScratch, revenueSnapshot } from "./support/revenue.fixture.ts";

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

async function projectIdOf(project: ImportedProject): Promise<number> {
  return (await ctx.db.selectFrom("projects").select("id").where("slug", "=", project.slug).executeTakeFirstOrThrow()).id;
}

/** Internal voter ids by ref (the import answers public ids). */
async function voterIdsOf(project: ImportedProject): Promise<(ref: string) => number> {
  const byPublic = new Map(Object.entries(project.ids.ids.voters as Record<string, string>).map(([ref, publicId]) => [publicId, ref]));
  const rows = await ctx.db
    .selectFrom("voters")
    .select(["id", "public_id"])
    .where("public_id", "in", [...byPublic.keys()])
    .execute();
  const ids = new Map(rows.map((row) => [byPublic.get(row.public_id)!, row.id]));
  return (ref) => ids.get(ref)!;
}

/** A feature_tier_votes row found on one side only: missing from the stored ones, or extra. */
type OffRow = { problem: "missing" | "extra" } & Omit<Selectable<FeatureTierVotesTable>, "project_id">;

/** Stored rows that differ from a fresh aggregation of the votes (empty: exact). */
async function storedOff(projectId: number): Promise<OffRow[]> {
  const { rows } = await sql<OffRow>`
    WITH fresh AS (
      SELECT v.feature_id, vr.tier_id, count(*)::int AS votes, (count(*) FILTER (WHERE vr.churned))::int AS churned,
             (count(*) FILTER (WHERE NOT vr.churned AND vr.mrr_override_cents IS NULL))::int AS billed,
             coalesce(sum(vr.mrr_override_cents) FILTER (WHERE NOT vr.churned), 0)::bigint AS override_cents
      FROM votes v JOIN voters vr ON vr.id = v.voter_id
      WHERE v.project_id = ${projectId} AND vr.tier_id IS NOT NULL
      GROUP BY v.feature_id, vr.tier_id
    ), stored AS (
      SELECT feature_id, tier_id, votes, churned, billed, override_cents FROM feature_tier_votes
      WHERE project_id = ${projectId} AND NOT (votes = 0 AND churned = 0 AND billed = 0 AND override_cents = 0)
    )
    SELECT 'missing' AS problem, * FROM (SELECT * FROM fresh EXCEPT SELECT * FROM stored) a
    UNION ALL
    SELECT 'extra' AS problem, * FROM (SELECT * FROM stored EXCEPT SELECT * FROM fresh) b`.execute(ctx.db);
  return rows;
}

/** The report's figures of every feature (one page of 100), ordered by id. */
type RevenueFeatures = Answer<"/api/v3/projects/{slug}/revenue/features", "get">;
type Figures = Pick<
  RevenueFeatures["data"][number],
  "id" | "vote_count" | "weighted_votes" | "paying_voters" | "churned_voters" | "mrr_cents" | "top_tier"
>;

async function reported(project: ImportedProject): Promise<Figures[]> {
  const response = await ctx.get(`/api/v3/projects/${project.slug}/revenue/features?per_page=100`, project.secretKey);
  expect(response.status).toBe(200);
  return (await body<RevenueFeatures>(response)).data
    .map(
      ({ id, vote_count, weighted_votes, paying_voters, churned_voters, mrr_cents, top_tier }): Figures => ({
        id,
        vote_count,
        weighted_votes,
        paying_voters,
        churned_voters,
        mrr_cents,
        top_tier,
      }),
    )
    .sort((a, b) => a.id - b.id);
}

async function expectExact(project: ImportedProject, projectId: number) {
  expect(await storedOff(projectId)).toEqual([]);
  expect(await reported(project)).toEqual(await fromScratch(ctx.db, projectId));
}

describe("stored revenue aggregates", () => {
  it("follow tier moves, churn, overrides, tier changes and deletions after the votes", async () => {
    const project = await ctx.importProject(revenueSnapshot());
    const projectId = await projectIdOf(project);
    const { tiers, features } = project.ids.ids;
    const voter = await voterIdsOf(project);
    const f2 = () => reported(project).then((rows) => rows.find((r) => r.id === features.f2));
    await expectExact(project, projectId);

    // ada Pro -> Business: SSO login (ada, bob override 15000, cyd churned Pro, dee) becomes
    // 5 + 5 + 3 + 1 = 14 weighted, mrr 19900 + 15000, Business has 2 votes against Pro's 1.
    await ctx.db.updateTable("voters").set({ tier_id: tiers.biz }).where("id", "=", voter("ada")).execute();
    expect(await f2()).toEqual({
      id: features.f2,
      vote_count: 4,
      weighted_votes: 14,
      paying_voters: 3,
      churned_voters: 1,
      mrr_cents: 34900,
      top_tier: "Business",
    });
    await expectExact(project, projectId);

    // bob churns and loses his override; cyd comes back; the Business amount and multiplier change.
    await ctx.db.updateTable("voters").set({ churned: true, mrr_override_cents: null }).where("id", "=", voter("bob")).execute();
    await ctx.db.updateTable("voters").set({ churned: false }).where("id", "=", voter("cyd")).execute();
    await ctx.db.updateTable("tiers").set({ mrr_cents: 25000, multiplier: 7 }).where("id", "=", tiers.biz).execute();
    expect(await f2()).toEqual({
      id: features.f2,
      vote_count: 4,
      weighted_votes: 7 + 7 + 3 + 1,
      paying_voters: 3,
      churned_voters: 1,
      mrr_cents: 25000 + 4900,
      top_tier: "Business",
    });
    await expectExact(project, projectId);

    // An override on a voter without a tier changes nothing; one on a tier voter replaces the amount.
    await ctx.db
      .updateTable("voters")
      .set({ mrr_override_cents: 777 })
      .where("id", "in", [voter("fay"), voter("hal")])
      .execute();
    await ctx.db.updateTable("voters").set({ tier_id: null }).where("id", "=", voter("ada")).execute();
    await ctx.db.updateTable("voters").set({ tier_id: tiers.pro }).where("id", "=", voter("dee")).execute();
    await expectExact(project, projectId);

    // Deleting a tier sets its voters' tier to NULL (their rows go with the tier).
    await ctx.db.deleteFrom("tiers").where("id", "=", tiers.legacy).execute();
    await expectExact(project, projectId);
    // A voter deleted on their own takes their contribution with them; a feature its rows.
    await ctx.db.deleteFrom("voters").where("id", "=", voter("cyd")).execute();
    await ctx.db.deleteFrom("features").where("id", "=", features.f3).execute();
    // No route deletes a single voter; the headcount counter (the vote path's, not the triggers')
    // is recounted here so the report can be compared as a whole.
    await sql`UPDATE features f SET vote_count = (SELECT count(*) FROM votes v WHERE v.feature_id = f.id)
      WHERE f.project_id = ${projectId}`.execute(ctx.db);
    await expectExact(project, projectId);

    // The rebuild used after trigger-less bulk loads gives the same rows.
    await sql`SELECT rebuild_feature_tier_votes(${projectId}::int)`.execute(ctx.db);
    await expectExact(project, projectId);
  });

  it("parallel votes, withdrawals and tier moves leave the stored rows equal to a recomputation", async () => {
    const slug = uniqueSlug("revagg");
    const count = 60;
    const tierOf = (i: number) => (i % 4 === 0 ? null : i % 4 === 1 ? "pro" : i % 4 === 2 ? "biz" : "team");
    const project = await ctx.importProject({
      project: { slug },
      tiers: [
        { ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 3 },
        { ref: "biz", name: "Business", mrr_cents: 19900, multiplier: 5 },
        { ref: "team", name: "Team", mrr_cents: 9900, multiplier: 2 },
      ],
      voters: Array.from({ length: count }, (_, i) => ({
        ref: `v${i}`,
        anon_token: `anon-v${i}-${slug}`,
        tier: tierOf(i),
        churned: i % 7 === 0,
        mrr_override_cents: i % 5 === 0 ? 1000 + i : null,
      })),
      features: ["a", "b", "c"].map((ref) => ({ ref, board: "roadmap", column: "c-open", heading: ref.toUpperCase() })),
      // Every voter starts with a vote on "c", so withdrawals there race the casts elsewhere.
      votes: Array.from({ length: count }, (_, i) => ({ voter: `v${i}`, feature: "c" })),
    });
    const projectId = await projectIdOf(project);
    const { tiers, features } = project.ids.ids;
    const voter = await voterIdsOf(project);
    const vote = (method: "POST" | "DELETE", i: number, feature: string) =>
      ctx
        .send(method, `/api/v3/projects/${slug}/features/${features[feature]}/vote`, project.secretKey, undefined, {
          "X-VF-Anon": `anon-v${i}-${slug}`,
        })
        .then((response) => response.status);
    const moves = Array.from({ length: 12 }, (_, k) =>
      ctx.db
        .updateTable("voters")
        .set({ tier_id: [tiers.pro, tiers.biz, tiers.team, null][k % 4], churned: k % 3 === 0 })
        .where("id", "=", voter(`v${k * 5}`))
        .execute()
        .then(() => 200),
    );
    const statuses = await Promise.all([
      ...Array.from({ length: count }, (_, i) => vote("POST", i, "a")),
      ...Array.from({ length: count }, (_, i) => vote("POST", i, "b")),
      ...Array.from({ length: count / 2 }, (_, i) => vote("DELETE", i * 2, "c")),
      ...moves,
    ]);
    expect(statuses.every((status) => status === 200)).toBe(true);
    await expectExact(project, projectId);
    const stored = await ctx.db.selectFrom("features").select(["id", "vote_count"]).where("project_id", "=", projectId).execute();
    expect(Object.fromEntries(stored.map((f) => [f.id, f.vote_count]))).toEqual({
      [features.a]: count,
      [features.b]: count,
      [features.c]: count / 2,
    });
  });
});
