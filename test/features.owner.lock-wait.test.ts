/**
 * An owner edit that waits for a feature's row lock (owner-api-v3.md, "Events": feature.updated
 * carries every field the edit changed, and only those). The edit locks and reads the feature in
 * one statement, whose joined rows (tags, release, merge) are as of the statement's start; when
 * another edit commits while it waits, it must read the feature again, or the other edit's tags
 * would be reported as its own change. The other edit is a plain session of this test standing
 * for another instance. Postgres only: PGlite has one connection, so no session can hold a lock
 * while a request waits.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCK_BOUND_COMMENT } from "../db/prepared-statement-client.ts";
import { projectIdOf } from "./support/counters.invariants.ts";
import { expectStatus } from "./support/events.fixture.ts";
import { createTestContext, type TestContext, uniqueSlug } from "./support/harness.ts";
import { inOtherSession, waitForLockWaiter } from "./support/lock-waiter.ts";

const onPostgres = Boolean(process.env.DATABASE_URL);

describe.skipIf(!onPostgres)("an owner edit that waited for the feature's row lock", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(() => ctx.close());

  it("reports only its own change when an edit of the tags committed while it waited", async () => {
    const slug = uniqueSlug("lockwait");
    const project = await ctx.importProject({
      project: { slug },
      tags: [
        { ref: "t-ui", name: "UI" },
        { ref: "t-api", name: "API" },
      ],
      features: [{ ref: "f", board: "roadmap", column: "c-open", heading: "Contended", tags: ["t-ui"] }],
    });
    const { ids } = project.ids;
    const featureId: number = ids.features.f;
    await inOtherSession(async (other) => {
      // The other edit: holds the row, replaces the tags and touches the row, as an owner edit does.
      await other`BEGIN`;
      await other`SELECT id FROM features WHERE id = ${featureId} FOR NO KEY UPDATE`;
      await other`DELETE FROM feature_tags WHERE feature_id = ${featureId}`;
      await other`INSERT INTO feature_tags (feature_id, tag_id) VALUES (${featureId}, ${ids.tags["t-api"]})`;
      await other`UPDATE features SET updated_at = now() WHERE id = ${featureId}`;
      const patch = ctx.send("PATCH", `/api/v3/projects/${project.slug}/admin/features/${featureId}`, project.secretKey, {
        is_pinned: true,
      });
      await waitForLockWaiter(other, `${LOCK_BOUND_COMMENT}select`, "the PATCH");
      await other`COMMIT`;
      const answer = await expectStatus(await patch, 200);
      expect(answer.data).toMatchObject({ is_pinned: true, tags: [{ id: ids.tags["t-api"], name: "API" }] });
      // Read from the outbox itself: the feed holds back events while any transaction of the
      // cluster that began before them is still open.
      const updated = await ctx.db
        .selectFrom("events")
        .select("data")
        .where("project_id", "=", await projectIdOf(ctx.db, project.slug))
        .where("type", "=", "feature.updated")
        .execute();
      expect(updated.map((event) => (event.data as { changes: unknown }).changes)).toEqual([{ is_pinned: { from: false, to: true } }]);
    });
  });
});
