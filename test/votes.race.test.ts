/**
 * Votes under concurrency (docs/architecture.md, "Data rules"): counters stay exact because they
 * move in
 * the vote's transaction by SQL increments guarded by the votes primary key.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type ImportedProject, type SnapshotParts, type TestContext, uniqueSlug } from "./support/harness.ts";

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

/** `count` voters v0.. (the first `heavy` on a tier with multiplier 3) and one open feature. */
function crowd(count: number, heavy: number, votes: { voter: string; feature: string }[] = []): SnapshotParts {
  const slug = uniqueSlug("race");
  return {
    project: { slug, settings: { score_is_weighted: true } },
    tiers: [{ ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 3 }],
    voters: Array.from({ length: count }, (_, i) => ({ ref: `v${i}`, anon_token: `anon-v${i}-${slug}`, tier: i < heavy ? "pro" : null })),
    features: [{ ref: "hot", board: "roadmap", column: "c-open", heading: "Hot" }],
    votes,
  };
}

function send(project: ImportedProject, method: "POST" | "DELETE", voter: number) {
  return ctx
    .send(method, `/api/v3/projects/${project.slug}/features/${project.ids.ids.features.hot}/vote`, project.secretKey, undefined, {
      "X-VF-Anon": `anon-v${voter}-${project.slug}`,
    })
    .then(async (response) => ({ status: response.status, body: await response.json() }));
}

/** A ledger row: stored counters and what the rows say (all integers). */
interface Ledger {
  vote_count: number;
  weighted_score: number;
  trending_score: number | null;
  rows: number;
  weights: number;
  voter_count: number;
  distinct_voters: number;
  voters_off: number;
}

/** The feature's stored counters next to what the vote rows say they should be. */
async function ledger(project: ImportedProject) {
  const { rows } = await sql<Ledger>`SELECT f.vote_count, f.weighted_score, f.trending_score,
      (SELECT count(*)::int FROM votes v WHERE v.feature_id = f.id) AS rows,
      (SELECT coalesce(sum(v.weight), 0)::int FROM votes v WHERE v.feature_id = f.id) AS weights,
      (SELECT coalesce(sum(c.voter_count), 0)::int FROM project_voter_counts c WHERE c.project_id = p.id) AS voter_count,
      (SELECT count(DISTINCT v.voter_id)::int FROM votes v WHERE v.project_id = p.id) AS distinct_voters,
      (SELECT count(*)::int FROM voters r WHERE r.project_id = p.id
        AND r.vote_count <> (SELECT count(*) FROM votes v WHERE v.voter_id = r.id)) AS voters_off
    FROM features f JOIN projects p ON p.id = f.project_id WHERE f.id = ${project.ids.ids.features.hot}`.execute(ctx.db);
  return rows[0]!;
}

describe("parallel votes", () => {
  it("100 distinct voters at once: every vote counted once, weighted score exact", async () => {
    const project = await ctx.importProject(crowd(100, 30));
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => send(project, "POST", i)));
    expect(results.map((r) => r.status)).toEqual(Array(100).fill(200));
    // Each vote saw the count its own increment produced: 1..100, each exactly once.
    expect(results.map((r) => r.body.data.vote_count).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(Math.max(...results.map((r) => r.body.data.score))).toBe(30 * 3 + 70);
    expect(await ledger(project)).toMatchObject({
      vote_count: 100,
      weighted_score: 160,
      rows: 100,
      weights: 160,
      voter_count: 100,
      distinct_voters: 100,
      voters_off: 0,
    });
    const read = await ctx.get(`/api/v3/projects/${project.slug}/features/${project.ids.ids.features.hot}`, project.secretKey);
    expect((await read.json()).data).toMatchObject({ vote_count: 100, score: 160, score_is_weighted: true });
  });

  it("20 identical votes by one voter at once: one is recorded, 19 answer 409 already_exists", async () => {
    const project = await ctx.importProject(crowd(1, 1));
    const results = await Promise.all(Array.from({ length: 20 }, () => send(project, "POST", 0)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    const conflicts = results.filter((r) => r.status === 409);
    expect(conflicts).toHaveLength(19);
    expect(conflicts.every((r) => r.body.error.code === "already_exists")).toBe(true);
    expect(await ledger(project)).toMatchObject({ vote_count: 1, weighted_score: 3, rows: 1, weights: 3, voter_count: 1, voters_off: 0 });
  });

  it("mixed votes and withdrawals at once leave the counters equal to the vote rows", async () => {
    // v0..v19 start with a vote; v20..v39 start without.
    const project = await ctx.importProject(
      crowd(
        40,
        10,
        Array.from({ length: 20 }, (_, i) => ({ voter: `v${i}`, feature: "hot" })),
      ),
    );
    const operations = [
      ...Array.from({ length: 20 }, (_, i) => send(project, "DELETE", i)),
      ...Array.from({ length: 20 }, (_, i) => send(project, "POST", 20 + i)),
      // Racing the above: re-votes, withdrawals of votes maybe not cast yet, duplicates.
      ...Array.from({ length: 10 }, (_, i) => send(project, "POST", i)),
      ...Array.from({ length: 10 }, (_, i) => send(project, "DELETE", 25 + i)),
      ...Array.from({ length: 10 }, (_, i) => send(project, "POST", 20 + i)),
    ];
    const results = await Promise.all(operations);
    expect(results.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    const state = await ledger(project);
    expect(state.vote_count).toBe(state.rows);
    expect(state.weighted_score).toBe(state.weights);
    expect(state.voter_count).toBe(state.distinct_voters);
    expect(state.voters_off).toBe(0);
    expect(state.trending_score === null).toBe(state.rows === 0);
  });
});
