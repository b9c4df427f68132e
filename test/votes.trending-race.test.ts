/**
 * trending_score stays what the votes say when withdrawals race (contract, "Taking part" rule 2;
 * docs/architecture.md, "Data rules": counters exact under concurrency). A withdrawal that removes
 * the vote
 * carrying nearly all of the score recomputes it from the votes left; when it waited for the
 * feature's row lock behind another withdrawal, the recomputation must not count the vote that
 * withdrawal deleted. The other withdrawal is a plain session of this test standing for another
 * request. Postgres only: PGlite has one connection, so no session can hold a lock while a
 * request waits.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recomputedTrending } from "../src/lib/rules/trending.ts";
import { createTestContext, type TestContext, uniqueSlug } from "./support/harness.ts";
import { inOtherSession, waitForLockWaiter } from "./support/lock-waiter.ts";

const onPostgres = Boolean(process.env.DATABASE_URL);

describe.skipIf(!onPostgres)("a withdrawal that waited for the feature's row lock", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(() => ctx.close());

  it("recomputes trending_score from the votes committed once it holds the lock", async () => {
    const slug = uniqueSlug("trendrace");
    const project = await ctx.importProject({
      project: { slug },
      voters: ["o1", "o2", "b", "c"].map((ref) => ({ ref, anon_token: `anon-${ref}-${slug}` })),
      features: [{ ref: "f", board: "roadmap", column: "c-open", heading: "Raced" }],
    });
    const { ids } = project.ids;
    const featureId: number = ids.features.f;
    const voterRow = async (ref: string) =>
      (await ctx.db.selectFrom("voters").select("id").where("public_id", "=", ids.voters[ref]).executeTakeFirstOrThrow()).id;
    const headers = (ref: string) => ({ "X-VF-Anon": `anon-${ref}-${slug}` });
    const vote = `/api/v3/projects/${project.slug}/features/${featureId}/vote`;
    for (const ref of ["o1", "o2", "b", "c"]) {
      expect((await ctx.send("POST", vote, project.secretKey, undefined, headers(ref))).status).toBe(200);
    }
    // Two old votes, decayed to nothing next to b's and c's recent ones.
    await ctx.db
      .updateTable("votes")
      .set({ created_at: new Date("2025-01-01T00:00:00Z") })
      .where("feature_id", "=", featureId)
      .where("voter_id", "in", [await voterRow("o1"), await voterRow("o2")])
      .execute();
    await ctx.db
      .updateTable("features")
      .set({ trending_score: recomputedTrending(featureId, -1) })
      .where("id", "=", featureId)
      .execute();

    const cId = await voterRow("c");
    await inOtherSession(async (other) => {
      // c withdraws in the other session: its vote row goes, the score is recomputed without it.
      await other`BEGIN`;
      await other`SELECT id FROM features WHERE id = ${featureId} FOR NO KEY UPDATE`;
      await other`DELETE FROM votes WHERE feature_id = ${featureId} AND voter_id = ${cId}`;
      // (the epoch and decay of src/lib/rules/trending.ts; b's withdrawal recomputes it anyway)
      await other`UPDATE features SET vote_count = vote_count - 1, weighted_score = weighted_score - 1,
        trending_score = fb_trending_of_votes(${featureId}::int, -1, ${Date.UTC(2024, 0, 1) / 1000}::float8, ${(3 * 86400) / Math.LN2}::float8)
        WHERE id = ${featureId}`;
      await other`UPDATE voters SET vote_count = vote_count - 1 WHERE id = ${cId}`;
      // b withdraws meanwhile: its statement starts now and waits for the row lock.
      const withdrawal = ctx.send("DELETE", vote, project.secretKey, undefined, headers("b"));
      await waitForLockWaiter(other, `with "visible"`, "the withdrawal");
      await other`COMMIT`;
      expect((await withdrawal).status).toBe(200);
    });
    // Left: the two old votes, and a score that is theirs, not one still counting c's vote.
    const row = await ctx.db
      .selectFrom("features")
      .select(["vote_count", "trending_score", recomputedTrending(featureId, -1).as("recomputed")])
      .where("id", "=", featureId)
      .executeTakeFirstOrThrow();
    expect(row.vote_count).toBe(2);
    expect(Math.abs(Number(row.trending_score) - Number(row.recomputed))).toBeLessThan(1e-6);
  });
});
