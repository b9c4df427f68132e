/**
 * An attempt that ends while the owner pauses its webhook (owner-api-v3.md, webhooks: a disabled
 * webhook's deliveries wait, with no next attempt, until it is enabled again). The owner's PATCH
 * locks the webhook's row, disables it and pauses its pending deliveries, leaving one under a
 * live claim to the attempt's own record; that record must see the pause even when the attempt
 * ends before the PATCH commits. The PATCH is a plain session of this test standing for another
 * instance. Postgres only: PGlite has one connection, so no session can hold a lock while the
 * worker waits.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newClaimToken, recordAttempt } from "../src/events/deliveries.repository.ts";
import { adminPath, expectStatus } from "./support/events.fixture.ts";
import { createTestContext, type TestContext, uniqueSlug } from "./support/harness.ts";
import { inOtherSession, waitForLockWaiter } from "./support/lock-waiter.ts";

const onPostgres = Boolean(process.env.DATABASE_URL);

describe.skipIf(!onPostgres)("an attempt that ends while its webhook is being paused", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext({ WEBHOOK_ALLOW_PRIVATE_URLS: "true" });
  });
  afterAll(() => ctx.close());

  it("is recorded paused, with no next attempt, once the pause commits", async () => {
    const project = await ctx.importProject({ project: { slug: uniqueSlug("pauserace") } });
    const created = await expectStatus(
      await ctx.send("POST", adminPath(project, "/webhooks"), project.secretKey, { url: "http://127.0.0.1:9/hook" }),
      201,
    );
    const webhookId = Number(created.data.id);
    // A delivery under a live claim: its attempt is under way.
    const claimToken = newClaimToken();
    const { rows } = await sql<{ id: string }>`
      INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, status, attempts, next_attempt_at, claim_token)
      VALUES (${webhookId}, ${`evt_${claimToken}`}, 'feature.created', 'pending', 1, now() + interval '30 seconds', ${claimToken})
      RETURNING id::text`.execute(ctx.db);
    const deliveryId = rows[0]!.id;

    await inOtherSession(async (other) => {
      // The owner's PATCH: locks the webhook, disables it, pauses what is not under a claim.
      await other`BEGIN`;
      await other`SELECT enabled FROM webhooks WHERE id = ${webhookId} FOR UPDATE`;
      await other`UPDATE webhooks SET enabled = false WHERE id = ${webhookId}`;
      // The attempt fails meanwhile and would be retried in a minute.
      const recorded = recordAttempt(
        ctx.db,
        deliveryId,
        claimToken,
        { statusCode: 500, error: "HTTP 500", durationMs: 5, retryInSeconds: 60, succeeded: false, gone: false },
        { disableAfter: 100 },
      );
      // The record waits for the PATCH (or, recorded at once, may schedule a retry of a paused webhook).
      await Promise.race([waitForLockWaiter(other, "SELECT w.enabled FROM webhooks w", "the attempt's record"), recorded]);
      await other`COMMIT`;
      expect((await recorded).recorded).toBe(true);
    });
    const delivery = await ctx.db
      .selectFrom("webhook_deliveries")
      .select(["status", "next_attempt_at", "claim_token"])
      .where("id", "=", deliveryId)
      .executeTakeFirstOrThrow();
    expect(delivery).toEqual({ status: "pending", next_attempt_at: null, claim_token: null });
  });
});
