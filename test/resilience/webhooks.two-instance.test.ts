/**
 * Webhook delivery across processes (docs/contract/owner-api-v3.md, "Webhooks": each
 * attempt made by one instance, resumed after a restart):
 * two server processes on one Postgres, each running its dispatcher and delivery worker.
 * - N events -> N deliveries at the receiver, each signed, none made twice (counted by
 *   webhook-id at a real receiver), each delivery row succeeded at its first attempt.
 * - A server killed (SIGKILL) while its request waits at the receiver: after a restart the
 *   delivery is made again once the claim's lease has ended, and succeeds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordEvents } from "../../src/events/outbox.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";
import { json, send } from "./support/http.ts";
import { signalGroup, waitForExit, waitUntil } from "./support/processes.ts";
import { type ServerInstance, startServer } from "./support/server.ts";
import { type Stack, startStack } from "./support/stack.ts";

let stack: Stack;
let b: ServerInstance | undefined;
let c: ServerInstance | undefined;
let receiver: WebhookReceiver;

const WEBHOOK_ENV = {
  WEBHOOK_ALLOW_PRIVATE_URLS: "true",
  WEBHOOK_POLL_INTERVAL_MS: "100",
  WEBHOOK_RETRY_SCHEDULE_SECONDS: "0.5,1,1,2",
  // Lease = 2 x timeout + 5 s = 9 s: how long a killed server's claim blocks its delivery.
  WEBHOOK_TIMEOUT_SECONDS: "2",
  WEBHOOK_CONCURRENCY: "8",
};

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  stack = await startStack({ env: WEBHOOK_ENV });
  b = await startServer(stack.env);
}, 120_000);
afterAll(async () => {
  await b?.stop();
  await c?.stop();
  await stack?.close();
  await receiver?.close();
});

async function createWebhook(origin: string, slug: string, key: string, url: string): Promise<{ id: number; secret: string }> {
  const result = await send(origin, {
    method: "POST",
    path: `/api/v3/projects/${slug}/admin/webhooks`,
    headers: { "X-API-Key": key, "Content-Type": "application/json" },
    body: JSON.stringify({ url }),
  });
  expect(result.status, result.text).toBe(201);
  const created = json(result).data;
  receiver.trust(created.secret);
  return created;
}

async function projectId(slug: string): Promise<number> {
  const row = await stack.seeder.handle.db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirstOrThrow();
  return row.id;
}

describe("webhooks with two instances on one Postgres", () => {
  it("N events -> N deliveries at the receiver, none made twice", async () => {
    const project = await stack.seeder.importProject();
    const webhook = await createWebhook(stack.server.origin, project.slug, project.secretKey, `${receiver.url}/shared`);
    // A short pause per answer keeps several requests under way, so both workers claim at once.
    receiver.answer(() => ({ delayMs: 20 }));
    const id = await projectId(project.slug);
    const db = stack.seeder.handle.db;
    const N = 300;
    await Promise.all(
      Array.from({ length: 30 }, (_, t) =>
        db.transaction().execute((trx) =>
          recordEvents(
            trx,
            id,
            Array.from({ length: 10 }, (_, i) => ({ type: "feature.created" as const, object: { id: t * 10 + i } })),
          ),
        ),
      ),
    );
    await receiver.waitFor((all) => new Set(all.filter((r) => r.path === "/shared").map((r) => r.id)).size >= N, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const received = receiver.on("/shared");
    const ids = received.map((r) => r.id);
    expect(new Set(ids).size).toBe(N);
    expect(ids).toHaveLength(N);
    expect(received.every((r) => r.verified)).toBe(true);
    expect(new Set(received.map((r) => r.payload.data.object.id)).size).toBe(N);
    const rows = await db.selectFrom("webhook_deliveries").select(["status", "attempts"]).where("webhook_id", "=", webhook.id).execute();
    expect(rows).toHaveLength(N);
    expect(rows.every((row) => row.status === "succeeded" && row.attempts === 1)).toBe(true);
  });

  it("a server killed mid-delivery: the delivery is made after the restart", async () => {
    // One instance left, so the one that claims is the one killed.
    await b?.stop();
    b = undefined;
    const project = await stack.seeder.importProject();
    const webhook = await createWebhook(stack.server.origin, project.slug, project.secretKey, `${receiver.url}/killed`);
    let first = true;
    receiver.answer((request) => {
      if (request.path !== "/killed") return {};
      if (first) {
        first = false;
        return { hang: true };
      }
      return {};
    });
    const db = stack.seeder.handle.db;
    const id = await projectId(project.slug);
    await db
      .transaction()
      .execute((trx) => recordEvents(trx, id, [{ type: "vote.created", object: { feature_id: 1, voter_id: "v_x", vote_count: 1 } }]));
    await receiver.waitFor(() => receiver.on("/killed").length >= 1, 20_000);
    signalGroup(stack.server.child, "SIGKILL");
    expect(await waitForExit(stack.server.child, 5000)).not.toBe("timeout");
    const claimed = await db.selectFrom("webhook_deliveries").selectAll().where("webhook_id", "=", webhook.id).executeTakeFirstOrThrow();
    expect(claimed).toMatchObject({ status: "pending", attempts: 1 });
    expect(claimed.claim_token).not.toBeNull();
    c = await startServer(stack.env);
    await waitUntil(
      "the delivery to succeed after the restart",
      async () => {
        const row = await db
          .selectFrom("webhook_deliveries")
          .select("status")
          .where("webhook_id", "=", webhook.id)
          .executeTakeFirstOrThrow();
        return row.status === "succeeded";
      },
      30_000,
      200,
    );
    const attempts = receiver.on("/killed");
    expect(attempts).toHaveLength(2);
    expect(attempts[1]!.id).toBe(attempts[0]!.id);
    expect(attempts[1]!.verified).toBe(true);
    expect(attempts[1]!.status).toBe(204);
    // Made after the lease of the killed server's claim ran out (9 s after it was taken).
    expect(attempts[1]!.receivedAt - attempts[0]!.receivedAt).toBeGreaterThanOrEqual(8000);
    const done = await db.selectFrom("webhook_deliveries").selectAll().where("webhook_id", "=", webhook.id).executeTakeFirstOrThrow();
    expect(done).toMatchObject({ status: "succeeded", attempts: 2, last_status_code: 204, claim_token: null });
  });
});
