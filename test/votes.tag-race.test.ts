/**
 * A vote records which listings can show its feature (src/lib/data/read-dependencies.ts), its
 * tags among them, so that a cached tag listing the vote changes is retired. An owner edit adds
 * a tag while it holds the feature's row lock; a vote that waited for that lock must record the
 * tag the edit committed, not the tags of its statement's older snapshot. The edit is a plain
 * session of this test standing for the owner's request. Postgres only: PGlite has one
 * connection, so no session can hold a lock while a vote waits.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { castVote } from "../src/routes/votes/votes.repository.ts";
import { createTestContext, type TestContext, uniqueSlug } from "./support/harness.ts";
import { inOtherSession, waitForLockWaiter } from "./support/lock-waiter.ts";

const onPostgres = Boolean(process.env.DATABASE_URL);

describe.skipIf(!onPostgres)("a vote that waited for the feature's row lock", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(() => ctx.close());

  it("records the tags committed once it holds the lock", async () => {
    const slug = uniqueSlug("tagrace");
    const project = await ctx.importProject({
      project: { slug },
      tags: [
        { ref: "t-ui", name: "UI" },
        { ref: "t-api", name: "API" },
      ],
      voters: [{ ref: "ada", anon_token: `anon-ada-${slug}` }],
      features: [{ ref: "f", board: "roadmap", column: "c-open", heading: "Tagged meanwhile", tags: ["t-api"] }],
    });
    const { ids } = project.ids;
    const featureId: number = ids.features.f;
    const row = await ctx.db
      .selectFrom("voters")
      .innerJoin("projects", "projects.id", "voters.project_id")
      .select(["voters.id", "voters.project_id", "projects.settings"])
      .where("voters.public_id", "=", ids.voters.ada)
      .executeTakeFirstOrThrow();

    await inOtherSession(async (other) => {
      await other`BEGIN`;
      await other`SELECT id FROM features WHERE id = ${featureId} FOR NO KEY UPDATE`;
      await other`INSERT INTO feature_tags (feature_id, tag_id) VALUES (${featureId}, ${ids.tags["t-ui"]})`;
      const cast = castVote(ctx.db, row.settings, { projectId: row.project_id, featureId, voterId: row.id }, new Date());
      await waitForLockWaiter(other, `with "visible"`, "the vote");
      await other`COMMIT`;
      const outcome = await cast;
      expect(outcome.kind).toBe("changed");
      if (outcome.kind !== "changed") return;
      expect(outcome.moves.tag_ids).toEqual([ids.tags["t-ui"], ids.tags["t-api"]].sort((a: number, b: number) => a - b));
    });
  });
});
