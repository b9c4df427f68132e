/**
 * The stored trending score stays exact through vote and withdrawal (docs/decisions.md, "Features": each
 * vote decays with a 3-day half-life), including when a new vote dwarfs much older ones so a
 * plain log-space subtraction would cancel them out.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { voteExponent } from "../src/lib/rules/trending.ts";
import { createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
let project: ImportedProject;
const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
const voters = ["old1", "old2", "fresh"].map((ref) => ({ ref, anon_token: `anon-token-${ref}-00000000000000` }));

beforeAll(async () => {
  ctx = await createTestContext();
  project = await ctx.importProject({
    voters,
    features: [{ ref: "f", board: "roadmap", column: "c-planned", heading: "Old favourite" }],
    votes: [
      { voter: "old1", feature: "f", created_at: daysAgo(90) },
      { voter: "old2", feature: "f", created_at: daysAgo(120) },
    ],
  });
});
afterAll(() => ctx.close());

/** Stored score and the one recomputed from the vote rows (log-sum-exp). */
async function scores(featureId: number) {
  const row = await sql<{ stored: number | null; exact: number | null }>`
    SELECT f.trending_score AS stored,
      (SELECT max(x) + ln(sum(exp(x - (SELECT max(${voteExponent(sql.ref("created_at"))}) FROM votes WHERE feature_id = ${featureId}))))
         FROM (SELECT ${voteExponent(sql.ref("created_at"))} AS x FROM votes WHERE feature_id = ${featureId}) v) AS exact
    FROM features f WHERE f.id = ${featureId}`.execute(ctx.db);
  return row.rows[0]!;
}

describe("trending score", () => {
  it("keeps older votes when a vote that outweighs them a million times is withdrawn", async () => {
    const featureId = project.ids.ids.features.f as number;
    const before = await scores(featureId);
    expect(before.stored).not.toBeNull();
    expect(before.stored!).toBeCloseTo(before.exact!, 9);

    const path = `/api/v3/projects/${project.slug}/features/${featureId}/vote`;
    const headers = { "X-VF-Anon": voters[2]!.anon_token };
    expect((await ctx.send("POST", path, project.secretKey, undefined, headers)).status).toBe(200);
    const during = await scores(featureId);
    expect(during.stored!).toBeCloseTo(during.exact!, 9);

    expect((await ctx.send("DELETE", path, project.secretKey, undefined, headers)).status).toBe(200);
    const after = await scores(featureId);
    expect(after.stored).not.toBeNull();
    expect(after.stored!).toBeCloseTo(before.exact!, 9);
  });
});
