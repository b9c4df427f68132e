/**
 * Owner changes racing voters (owner-api-v3.md, "Common rules": every stored counter stays equal
 * to what its rows say): 400 requests at once mixing owner edits, merges, unmerges, deletions and
 * owner comments with voters' votes, withdrawals, comments and likes on six features. No request
 * may fail with a 500 (lock order: feature rows first, by id; a deadlock victim is retried), and
 * afterwards every counter equals COUNT / SUM of its rows (counters.invariants.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { counterProblems, projectIdOf } from "./support/counters.invariants.ts";
import { createTestContext, type TestContext, uniqueSlug } from "./support/harness.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

/** A small deterministic PRNG (mulberry32) so a failing mix can be replayed. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VOTERS = 30;
const FEATURES = 6;

describe("owner changes racing voters", () => {
  it("400 racing requests: no 500, and every counter equals its rows afterwards", async () => {
    const slug = uniqueSlug("orace");
    const random = prng(20261123);
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
    const voters = Array.from({ length: VOTERS }, (_, i) => ({
      ref: `v${i}`,
      anon_token: `anon-${slug}-${i}`,
      tier: i % 3 === 0 ? "pro" : null,
      churned: i % 9 === 0,
    }));
    const features = Array.from({ length: FEATURES }, (_, i) => ({
      ref: `f${i}`,
      board: "roadmap",
      column: i % 2 ? "c-planned" : "c-open",
      heading: `Feature ${i}`,
    }));
    const votes: { voter: string; feature: string; created_at: string }[] = [];
    for (let v = 0; v < VOTERS; v++)
      for (let f = 0; f < FEATURES; f++)
        if (random() < 0.4)
          votes.push({ voter: `v${v}`, feature: `f${f}`, created_at: new Date(Date.now() - random() * 9e8).toISOString() });
    const comments = Array.from({ length: 12 }, (_, i) => ({
      ref: `k${i}`,
      feature: `f${i % FEATURES}`,
      voter: `v${i}`,
      content: `comment ${i}`,
    }));
    const p = await ctx.importProject({
      project: { slug, settings: { score_is_weighted: true, show_archived: true } },
      tiers: [{ ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 3 }],
      voters: [{ ref: "boss", role: "owner" }, ...voters],
      features,
      votes,
      comments,
    });
    const { ids } = p.ids;
    const featureIds = features.map((f) => ids.features[f.ref] as number);
    const commentIds = comments.map((c) => ids.comments[c.ref] as number);
    const admin = `/api/v3/projects/${slug}/admin`;
    const pub = `/api/v3/projects/${slug}`;
    const anon = (i: number) => ({ "X-VF-Anon": `anon-${slug}-${i}` });

    const operations: (() => Promise<Response>)[] = [];
    for (let n = 0; n < 400; n++) {
      const roll = random();
      const f = pick(featureIds);
      const g = pick(featureIds);
      const v = Math.floor(random() * VOTERS);
      if (roll < 0.3) operations.push(() => ctx.send("POST", `${pub}/features/${f}/vote`, p.secretKey, undefined, anon(v)));
      else if (roll < 0.45) operations.push(() => ctx.send("DELETE", `${pub}/features/${f}/vote`, p.secretKey, undefined, anon(v)));
      else if (roll < 0.53)
        operations.push(() => ctx.send("POST", `${pub}/features/${f}/comments`, p.secretKey, { content: `racing ${n}` }, anon(v)));
      else if (roll < 0.57)
        operations.push(() => ctx.send("DELETE", `${pub}/comments/${pick(commentIds)}`, p.secretKey, undefined, anon(v)));
      else if (roll < 0.61)
        operations.push(() => ctx.send("POST", `${pub}/comments/${pick(commentIds)}/like`, p.secretKey, undefined, anon(v)));
      else if (roll < 0.71) operations.push(() => ctx.send("POST", `${admin}/features/${f}/merge`, p.secretKey, { into_id: g }));
      else if (roll < 0.8) operations.push(() => ctx.send("POST", `${admin}/features/${f}/unmerge`, p.secretKey));
      else if (roll < 0.88)
        operations.push(() =>
          ctx.send(
            "PATCH",
            `${admin}/features/${f}`,
            p.secretKey,
            pick([
              { status: "planned" },
              { status: "open" },
              { is_approved: false },
              { is_approved: true },
              { status: "archived" },
              { is_pinned: true },
            ]),
          ),
        );
      else if (roll < 0.93)
        operations.push(() =>
          ctx.send("POST", `${admin}/features/${f}/comments`, p.secretKey, { content: `owner ${n}`, author_voter_id: ids.voters.boss }),
        );
      else if (roll < 0.96) operations.push(() => ctx.send("DELETE", `${admin}/comments/${pick(commentIds)}`, p.secretKey));
      // Deletions aim at one feature (the others would soon be gone): one succeeds, the rest 404.
      else if (roll < 0.975) operations.push(() => ctx.send("DELETE", `${admin}/features/${featureIds[FEATURES - 1]}`, p.secretKey));
      else operations.push(() => ctx.get(`${pub}/features?sort=trending`, p.secretKey));
    }
    const statuses = await Promise.all(
      operations.map(async (run) => {
        const response = await run();
        const body = await response.json();
        return `${response.status} ${body.error?.code ?? "ok"}`;
      }),
    );
    const tally: Record<string, number> = {};
    for (const status of statuses) tally[status] = (tally[status] ?? 0) + 1;
    expect(
      statuses.filter((status) => status.startsWith("5")),
      JSON.stringify(tally),
    ).toEqual([]);
    // Only the contract's answers: success, 404 (gone or hidden), 409 (already / not merged,
    // vote twice), 403 (a vote on a column that takes none), 422 (merge into a deleted feature).
    for (const status of Object.keys(tally)) expect(["200", "201", "403", "404", "409", "422"]).toContain(status.split(" ")[0]);
    // Enough of the mix succeeded for the race to mean something.
    expect((tally["200 ok"] ?? 0) + (tally["201 ok"] ?? 0), JSON.stringify(tally)).toBeGreaterThan(100);
    expect(await counterProblems(ctx.db, await projectIdOf(ctx.db, slug))).toEqual([]);
  }, 120_000);
});
