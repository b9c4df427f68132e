/**
 * Webhook delivery end to end (docs/contract/owner-api-v3.md, "Webhooks"), with a
 * real receiver verifying signatures with the standardwebhooks package and a delivery worker
 * running on short test settings (retries after 0.3, 0.6, 1 and 1.5 s; 1.5 s timeout; 3 failed
 * deliveries in a row disable). Covers: signed delivery of the EventObject and the events
 * filter; only events made after the webhook; rotation (both secrets verify during the overlap,
 * the new one alone after); receiver down then up (every event delivered, retries in the log);
 * 410 gone; redirects; 500s disabling after the run; hanging, slow and 10 MB receivers bounded
 * in time and memory without slowing the API's reads (p99 measured); the SSRF guard and address
 * pinning at delivery time; N concurrent events -> exactly N deliveries; stopping mid-attempt.
 */
import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sendDelivery } from "../src/events/attempt.ts";
import type { ClaimedDelivery } from "../src/events/deliveries.repository.ts";
import { type NewEvent, recordEvents } from "../src/events/outbox.ts";
import { generateWebhookSecret } from "../src/events/signing.ts";
import { WebhookWorker } from "../src/events/webhook-worker.ts";
import { createTestContext, type ImportedProject, type Schemas, type TestContext } from "./support/harness.ts";
import { expectStatus } from "./support/owner-accounts.fixture.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver.ts";

let ctx: TestContext;
let receiver: WebhookReceiver;
let worker: WebhookWorker;

beforeAll(async () => {
  ctx = await createTestContext({
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    WEBHOOK_POLL_INTERVAL_MS: "50",
    WEBHOOK_RETRY_SCHEDULE_SECONDS: "0.3,0.6,1,1.5",
    WEBHOOK_TIMEOUT_SECONDS: "1.5",
    WEBHOOK_DISABLE_AFTER_FAILURES: "3",
    WEBHOOK_CONCURRENCY: "8",
    WEBHOOK_CONCURRENCY_PER_WEBHOOK: "3",
  });
  receiver = await startWebhookReceiver();
  worker = new WebhookWorker({ db: ctx.db, config: ctx.deps.config, logger: ctx.deps.logger });
  await worker.start();
});
afterAll(async () => {
  await worker?.stop(0);
  await receiver?.close();
  await ctx?.close();
});

const admin = (project: ImportedProject, path: string) => `/api/v3/projects/${project.slug}/admin${path}`;

async function projectId(project: ImportedProject): Promise<number> {
  const row = await ctx.db.selectFrom("projects").select("id").where("slug", "=", project.slug).executeTakeFirstOrThrow();
  return row.id;
}

async function createWebhook(
  project: ImportedProject,
  body: Partial<Schemas["CreateWebhookBody"]> & { url: string },
  trusted: WebhookReceiver = receiver,
): Promise<Schemas["WebhookWithSecretObject"]> {
  const created: Schemas["WebhookWithSecretObject"] = (
    await expectStatus(await ctx.send("POST", admin(project, "/webhooks"), project.secretKey, body), 201)
  ).data;
  trusted.trust(created.secret);
  return created;
}

/** Records `events` of the project in one transaction (as a write path would). */
async function record(project: ImportedProject, events: NewEvent[]): Promise<void> {
  const id = await projectId(project);
  await ctx.db.transaction().execute((trx) => recordEvents(trx, id, events));
}

const featureEvent = (n: number, type: NewEvent["type"] = "feature.created"): NewEvent => ({
  type,
  object: { id: n, heading: `Feature ${n}` },
});

async function deliveries(project: ImportedProject, webhookId: number, query = ""): Promise<Schemas["DeliveryObject"][]> {
  const page = await expectStatus(
    await ctx.get(admin(project, `/webhooks/${webhookId}/deliveries?per_page=100${query}`), project.secretKey),
    200,
  );
  return page.data;
}

async function until<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 10_000,
  what = "condition",
  show?: () => Promise<unknown>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms${show ? `: ${JSON.stringify(await show())}` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const quiet = (ms = 400) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe("webhook delivery", () => {
  it("delivers each event signed, as an EventObject, to every webhook whose filter takes it, only events made after it", async () => {
    const project = await ctx.importProject();
    await record(project, [featureEvent(0)]); // before any webhook: delivered to none
    const all = await createWebhook(project, { url: `${receiver.url}/all` });
    const votes = await createWebhook(project, { url: `${receiver.url}/votes`, events: ["vote.created"] });
    await record(project, [featureEvent(1)]);
    await record(project, [
      { type: "vote.created", object: { feature_id: 1, voter_id: "v_1", vote_count: 1 } },
      { type: "feature.updated", object: { id: 1, heading: "Renamed" }, changes: { heading: { from: "Feature 1", to: "Renamed" } } },
    ]);
    await receiver.waitFor(() => receiver.on("/all").length >= 3 && receiver.on("/votes").length >= 1);
    await quiet();
    const toAll = receiver.on("/all");
    const toVotes = receiver.on("/votes");
    expect(toAll.map((r) => r.payload.type)).toEqual(expect.arrayContaining(["feature.created", "vote.created", "feature.updated"]));
    expect(toAll).toHaveLength(3);
    expect(toVotes.map((r) => r.payload.type)).toEqual(["vote.created"]);
    for (const request of [...toAll, ...toVotes]) {
      expect(request.verified).toBe(true);
      expect(request.id).toBe(request.payload.id);
      expect(request.id).toMatch(/^evt_[0-9a-z]{26}$/);
      expect(request.headers["content-type"]).toBe("application/json");
      expect(Math.abs(Number(request.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(30);
    }
    const updated = toAll.find((r) => r.payload.type === "feature.updated")!;
    expect(updated.payload).toEqual({
      id: updated.id,
      type: "feature.updated",
      created_at: expect.stringMatching(/Z$/),
      project: project.slug,
      data: { object: { id: 1, heading: "Renamed" }, changes: { heading: { from: "Feature 1", to: "Renamed" } } },
    });
    expect(toAll.find((r) => r.payload.type === "feature.created")!.payload.data).toEqual({
      object: { id: 1, heading: "Feature 1" },
      changes: null,
    });
    const log = await deliveries(project, all.id);
    expect(log).toHaveLength(3);
    for (const delivery of log) {
      expect(delivery).toMatchObject({ status: "succeeded", attempts: 1, last_status_code: 204, last_error: null, next_attempt_at: null });
      expect(delivery.last_duration_ms).toBeGreaterThanOrEqual(0);
    }
    expect((await deliveries(project, votes.id)).map((d) => d.event_type)).toEqual(["vote.created"]);
  });

  it("signs with both secrets for 24 h after a rotation, then with the new one alone", async () => {
    const project = await ctx.importProject();
    const created = await createWebhook(project, { url: `${receiver.url}/rotated` });
    const rotated = (
      await expectStatus(await ctx.send("POST", admin(project, `/webhooks/${created.id}/rotate-secret`), project.secretKey), 200)
    ).data;
    receiver.trust(rotated.secret);
    await record(project, [featureEvent(1)]);
    await receiver.waitFor(() => receiver.on("/rotated").length >= 1);
    const [during] = receiver.on("/rotated");
    expect(during!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(during!.verifiedBy).toEqual(expect.arrayContaining([created.secret, rotated.secret]));
    // The overlap is over: the previous secret no longer signs.
    await ctx.db
      .updateTable("webhooks")
      .set({ previous_secret_expires_at: new Date(Date.now() - 1000) })
      .where("id", "=", created.id)
      .execute();
    await record(project, [featureEvent(2)]);
    await receiver.waitFor(() => receiver.on("/rotated").length >= 2);
    const after = receiver.on("/rotated")[1]!;
    expect(after.headers["webhook-signature"]!.split(" ")).toHaveLength(1);
    expect(after.verifiedBy).toEqual([rotated.secret]);
  });

  it("receiver down for a while, then up: every event is delivered, with the retries in the log", async () => {
    const flaky = await startWebhookReceiver();
    try {
      const project = await ctx.importProject();
      const created = await createWebhook(project, { url: `${flaky.url}/flaky` }, flaky);
      await flaky.down();
      await record(
        project,
        [1, 2, 3, 4, 5].map((n) => featureEvent(n)),
      );
      // While it is down: attempts fail (no status), their error and duration logged, a retry due.
      const failing = await until(
        async () => {
          const log = await deliveries(project, created.id);
          return log.length === 5 && log.every((d) => d.attempts >= 2 && d.status === "pending") ? log : undefined;
        },
        10_000,
        "two attempts of each delivery",
        () => deliveries(project, created.id),
      );
      for (const delivery of failing) {
        expect(delivery.last_status_code).toBeNull();
        expect(delivery.last_error).toMatch(/ECONNREFUSED/);
        expect(delivery.last_duration_ms).toEqual(expect.any(Number));
        expect(delivery.next_attempt_at).toEqual(expect.any(String));
      }
      await flaky.up();
      await flaky.waitFor((all) => new Set(all.map((r) => r.id)).size >= 5);
      const done = await until(async () => {
        const log = await deliveries(project, created.id);
        return log.every((d) => d.status === "succeeded") ? log : undefined;
      });
      expect(done).toHaveLength(5);
      for (const delivery of done) {
        expect(delivery.attempts).toBeGreaterThanOrEqual(3);
        expect(delivery.last_status_code).toBe(204);
        expect(delivery.last_error).toBeNull();
      }
      // Each event arrived once (no attempt reached the receiver while it was down), signed.
      expect(flaky.received).toHaveLength(5);
      expect(flaky.received.every((r) => r.verified)).toBe(true);
      expect(new Set(flaky.received.map((r) => r.payload.data.object.id))).toEqual(new Set([1, 2, 3, 4, 5]));
    } finally {
      await flaky.close();
    }
  });

  it("410 Gone disables the webhook at once (gone); later events are not queued for it", async () => {
    const project = await ctx.importProject();
    const created = await createWebhook(project, { url: `${receiver.url}/gone` });
    receiver.answer((request) => (request.path === "/gone" ? { status: 410, body: "unsubscribed" } : {}));
    try {
      await record(project, [featureEvent(1)]);
      const [delivery] = await until(async () => {
        const log = await deliveries(project, created.id);
        return log[0]?.status === "failed" ? log : undefined;
      });
      expect(delivery).toMatchObject({
        status: "failed",
        attempts: 1,
        last_status_code: 410,
        last_error: "HTTP 410: unsubscribed",
        next_attempt_at: null,
      });
      const webhook = (await expectStatus(await ctx.get(admin(project, `/webhooks/${created.id}`), project.secretKey), 200)).data;
      expect(webhook).toMatchObject({ enabled: false, disabled_reason: "gone" });
      await record(project, [featureEvent(2)]);
      await quiet(500);
      expect(await deliveries(project, created.id)).toHaveLength(1);
      expect(receiver.on("/gone")).toHaveLength(1);
    } finally {
      receiver.answer(() => ({}));
    }
  });

  it("a redirect is a failure, never followed, retried until the schedule is used up", async () => {
    const project = await ctx.importProject();
    const created = await createWebhook(project, { url: `${receiver.url}/redirect` });
    receiver.answer((request) => (request.path === "/redirect" ? { status: 307, headers: { location: `${receiver.url}/elsewhere` } } : {}));
    try {
      await record(project, [featureEvent(1)]);
      const [delivery] = await until(async () => {
        const log = await deliveries(project, created.id);
        return log[0]?.status === "failed" ? log : undefined;
      }, 15_000);
      expect(delivery).toMatchObject({
        status: "failed",
        attempts: 5,
        last_status_code: 307,
        last_error: `HTTP 307: redirect to ${receiver.url}/elsewhere not followed`,
        next_attempt_at: null,
      });
      expect(receiver.on("/redirect")).toHaveLength(5);
      expect(receiver.on("/elsewhere")).toHaveLength(0);
      const row = await ctx.db
        .selectFrom("webhooks")
        .select(["consecutive_failures", "enabled"])
        .where("id", "=", created.id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ consecutive_failures: 1, enabled: true });
      // Retries were spaced by the schedule (0.3, 0.6, 1, 1.5 s, +-10 %).
      const times = receiver.on("/redirect").map((r) => r.receivedAt);
      const gaps = times.slice(1).map((t, i) => (t - times[i]!) / 1000);
      [0.3, 0.6, 1, 1.5].forEach((delay, i) => {
        expect(gaps[i]).toBeGreaterThanOrEqual(delay * 0.9 - 0.05);
        expect(gaps[i]).toBeLessThan(delay * 1.1 + 0.5);
      });
    } finally {
      receiver.answer(() => ({}));
    }
  });

  it("deliveries failing in a row disable the webhook (failing); a success in between resets the run; enabling resumes", async () => {
    const project = await ctx.importProject();
    const created = await createWebhook(project, { url: `${receiver.url}/broken` });
    let broken = true;
    receiver.answer((request) => (request.path === "/broken" && broken ? { status: 500 } : {}));
    try {
      await record(project, [featureEvent(1), featureEvent(2)]);
      await until(async () => (await deliveries(project, created.id, "&status=failed")).length === 2 || undefined, 15_000, "two failed");
      // A success resets the run: two more failures do not reach 3 in a row.
      broken = false;
      await record(project, [featureEvent(3)]);
      await until(async () => (await deliveries(project, created.id, "&status=succeeded")).length === 1 || undefined);
      const reset = await ctx.db
        .selectFrom("webhooks")
        .select("consecutive_failures")
        .where("id", "=", created.id)
        .executeTakeFirstOrThrow();
      expect(reset.consecutive_failures).toBe(0);
      broken = true;
      await record(project, [featureEvent(4), featureEvent(5), featureEvent(6)]);
      await until(async () => (await deliveries(project, created.id, "&status=failed")).length === 5 || undefined, 15_000, "five failed");
      const webhook = (await expectStatus(await ctx.get(admin(project, `/webhooks/${created.id}`), project.secretKey), 200)).data;
      expect(webhook).toMatchObject({ enabled: false, disabled_reason: "failing" });
      // Disabled: a new event queues nothing.
      await record(project, [featureEvent(7)]);
      await quiet(400);
      expect(await deliveries(project, created.id)).toHaveLength(6);
      // The owner fixes the receiver, enables the webhook and redelivers a failed delivery.
      broken = false;
      await expectStatus(await ctx.send("PATCH", admin(project, `/webhooks/${created.id}`), project.secretKey, { enabled: true }), 200);
      const failed = (await deliveries(project, created.id, "&status=failed"))[0]!;
      const queued = await expectStatus(
        await ctx.send("POST", admin(project, `/webhooks/${created.id}/deliveries/${failed.id}/redeliver`), project.secretKey),
        202,
      );
      expect(queued.data).toMatchObject({ status: "pending", attempts: 0, event_id: failed.event_id });
      await until(
        async () => (await deliveries(project, created.id)).find((d) => d.id === queued.data.id)?.status === "succeeded" || undefined,
      );
      const redelivered = receiver.on("/broken").filter((r) => r.id === failed.event_id);
      expect(redelivered.at(-1)!.status).toBe(204);
      expect(redelivered.at(-1)!.verified).toBe(true);
    } finally {
      receiver.answer(() => ({}));
    }
  });

  it("hanging, slow and 10 MB receivers stay bounded and do not hold up other webhooks or slow the API's reads", async () => {
    const project = await ctx.importProject({
      features: Array.from({ length: 20 }, (_, i) => ({ ref: `f${i}`, board: "roadmap", column: "c-open", heading: `Feature ${i}` })),
    });
    const read = async () => {
      const started = performance.now();
      const response = await ctx.get(`/api/v3/projects/${project.slug}/features?sort=new&per_page=20`, project.secretKey);
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      return performance.now() - started;
    };
    const measure = async (count: number) => {
      const times: number[] = [];
      for (let i = 0; i < count; i++) times.push(await read());
      return { p50: percentile(times, 50), p99: percentile(times, 99) };
    };
    await measure(20); // warm up
    const before = await measure(200);

    const hang = await createWebhook(project, { url: `${receiver.url}/hang` });
    const slow = await createWebhook(project, { url: `${receiver.url}/slow` });
    const huge = await createWebhook(project, { url: `${receiver.url}/huge` });
    await createWebhook(project, { url: `${receiver.url}/good` });
    receiver.answer((request) => {
      if (request.path === "/hang") return { hang: true };
      if (request.path === "/slow") return { delayMs: 800 };
      // 10 MB at about 6 MB/s: a client that read it all would take over a second per attempt.
      if (request.path === "/huge") return { status: 500, bodyBytes: 10 * 1024 * 1024, chunkBytes: 64 * 1024, chunkIntervalMs: 10 };
      return {};
    });
    const memoryBefore = process.memoryUsage();
    try {
      const recordedAt = Date.now();
      await record(
        project,
        [1, 2, 3, 4, 5, 6].map((n) => featureEvent(n)),
      );
      const during = await measure(200);
      // The good receiver got everything while the hanging one holds its (capped) slots.
      await receiver.waitFor(() => receiver.on("/good").length >= 6, 10_000);
      const goodDone = Math.max(...receiver.on("/good").map((r) => r.receivedAt)) - recordedAt;
      await until(
        async () => (await deliveries(project, slow.id, "&status=succeeded")).length === 6 || undefined,
        15_000,
        "slow ones succeeded",
      );
      const hung = await until(
        async () => {
          const log = await deliveries(project, hang.id);
          return log.length === 6 && log.every((d) => d.attempts >= 1 && d.last_error !== null) ? log : undefined;
        },
        15_000,
        "hanging attempts timed out",
      );
      const memoryAfter = process.memoryUsage();
      for (const delivery of hung) {
        expect(delivery.last_error).toBe("no answer within 1.5 s");
        expect(delivery.last_status_code).toBeNull();
        expect(delivery.last_duration_ms).toBeGreaterThanOrEqual(1400);
        expect(delivery.last_duration_ms).toBeLessThan(2500);
      }
      for (const delivery of await deliveries(project, slow.id)) {
        expect(delivery.last_duration_ms).toBeGreaterThanOrEqual(790);
      }
      const hugeLog = await until(async () => {
        const log = await deliveries(project, huge.id);
        return log.length === 6 && log.every((d) => d.last_status_code === 500) ? log : undefined;
      });
      for (const delivery of hugeLog) {
        expect(delivery.last_error).toMatch(/^HTTP 500: x+$/);
        expect(delivery.last_error!.length).toBeLessThanOrEqual(310);
        expect(delivery.last_duration_ms).toBeLessThan(1000);
      }
      // The client stopped reading after the excerpt: no 10 MB answer was written whole.
      const hugeRequests = receiver.on("/huge");
      expect(hugeRequests.length).toBeGreaterThanOrEqual(6);
      await quiet(300);
      expect(hugeRequests.every((r) => !r.bodyComplete && r.bodyBytesWritten < 10 * 1024 * 1024)).toBe(true);
      // At most 3 requests under way to one webhook (WEBHOOK_CONCURRENCY_PER_WEBHOOK): the first
      // attempts of the hanging webhook came in waves of at most 3.
      const firstHangs = receiver
        .on("/hang")
        .slice(0, 6)
        .map((r) => r.receivedAt);
      expect(firstHangs[3]! - firstHangs[0]!).toBeGreaterThanOrEqual(1300);

      const figures = {
        read_p50_ms_before: Number(before.p50.toFixed(1)),
        read_p99_ms_before: Number(before.p99.toFixed(1)),
        read_p50_ms_during: Number(during.p50.toFixed(1)),
        read_p99_ms_during: Number(during.p99.toFixed(1)),
        good_receiver_all_6_after_ms: goodDone,
        rss_growth_mb: Number(((memoryAfter.rss - memoryBefore.rss) / 1048576).toFixed(1)),
        array_buffers_growth_mb: Number(((memoryAfter.arrayBuffers - memoryBefore.arrayBuffers) / 1048576).toFixed(1)),
      };
      console.log(`webhook receivers bounded: ${JSON.stringify(figures)}`);
      expect(goodDone).toBeLessThan(1500);
      expect(figures.array_buffers_growth_mb).toBeLessThan(20);
      expect(during.p99).toBeLessThan(Math.max(100, before.p99 * 4));
    } finally {
      receiver.answer(() => ({}));
      await expectStatus(await ctx.send("PATCH", admin(project, `/webhooks/${hang.id}`), project.secretKey, { enabled: false }), 200);
    }
  });

  it("N events recorded concurrently while dispatching become exactly N deliveries, each received", async () => {
    const project = await ctx.importProject();
    const created = await createWebhook(project, { url: `${receiver.url}/many` });
    const writers = Array.from({ length: 10 }, (_, w) =>
      record(
        project,
        Array.from({ length: 10 }, (_, i) => featureEvent(w * 10 + i)),
      ),
    );
    await Promise.all(writers);
    await receiver.waitFor(() => new Set(receiver.on("/many").map((r) => r.id)).size >= 100, 20_000);
    const rows = await ctx.db.selectFrom("webhook_deliveries").select(["event_id"]).where("webhook_id", "=", created.id).execute();
    expect(rows).toHaveLength(100);
    expect(new Set(rows.map((r) => r.event_id)).size).toBe(100);
    const objects = new Set(receiver.on("/many").map((r) => r.payload.data.object.id));
    expect(objects.size).toBe(100);
  });
});

describe("the dispatcher's cursor", () => {
  it("dispatches every event once, in feed order, across a power of ten in the event sequence", async () => {
    const project = await ctx.importProject();
    const created = await createWebhook(project, { url: `${receiver.url}/ordered`, events: ["comment.created"] });
    const { max } = await ctx.db.selectFrom("events").select(ctx.db.fn.max("seq").as("max")).executeTakeFirstOrThrow();
    const next = Number(max ?? 0) + 1;
    const power = 10 ** Math.ceil(Math.log10(next + 1));
    // Enough events that the sequence crosses `power` (text order would put 1000 before 999).
    const filler = power - next - 6 <= 2000 ? Math.max(0, power - next - 6) : 0;
    const events: NewEvent[] = [
      ...Array.from({ length: filler }, (_, i) => featureEvent(i)),
      ...Array.from({ length: 12 }, (_, i) => ({ type: "comment.created" as const, object: { id: i } })),
    ];
    await record(project, events);
    await receiver.waitFor(() => receiver.on("/ordered").length >= 12, 20_000);
    await quiet(500);
    const rows = await ctx.db
      .selectFrom("webhook_deliveries")
      .innerJoin("events", "events.seq", "webhook_deliveries.event_seq")
      .select(["webhook_deliveries.id", "events.data"])
      .where("webhook_id", "=", created.id)
      .orderBy("webhook_deliveries.id")
      .execute();
    const objectId = (data: unknown) => (typeof data === "string" ? JSON.parse(data) : (data as { object: { id: number } })).object.id;
    expect(rows.map((row) => objectId(row.data))).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(receiver.on("/ordered")).toHaveLength(12);
  });
});

describe("redelivering a ping", () => {
  it("sends the same EventObject again (same evt_ id, created_at and webhook), built by the worker with no stored body", async () => {
    const project = await ctx.importProject();
    const created = await createWebhook(project, { url: `${receiver.url}/ping-again`, events: ["vote.created"] });
    const path = admin(project, `/webhooks/${created.id}`);
    const ping = (await expectStatus(await ctx.send("POST", `${path}/test`, project.secretKey), 200)).data;
    await expectStatus(await ctx.send("POST", `${path}/deliveries/${ping.id}/redeliver`, project.secretKey), 202);
    await receiver.waitFor(() => receiver.on("/ping-again").length >= 2);
    const [first, again] = receiver.on("/ping-again");
    expect(again!.verified).toBe(true);
    expect(again!.id).toBe(ping.event_id);
    expect(again!.body).toBe(first!.body);
    expect(again!.payload).toMatchObject({ id: ping.event_id, type: "ping", created_at: ping.created_at, project: project.slug });
  });
});

describe("the SSRF guard and address pinning at delivery time", () => {
  const claimed = (url: string, secret = generateWebhookSecret()): ClaimedDelivery & { body: string } => ({
    id: "0",
    webhook_id: 0,
    event_id: "evt_pinned",
    event_type: "feature.created",
    body: '{"id":"evt_pinned"}',
    attempts: 1,
    claim_token: "t",
    url,
    secret,
    previous_secret: null,
    previous_secret_expires_at: null,
  });
  const options = { timeoutSeconds: 2, retrySchedule: [1], disableAfter: 100 };

  it("refuses a name that now resolves to a private address, without connecting", async () => {
    const before = receiver.received.length;
    const { response } = await sendDelivery(claimed(`https://rebound.example:${receiver.port}/x`), {
      ...options,
      allowPrivate: false,
      resolve: async () => [{ address: "127.0.0.1", family: 4 }],
    });
    expect(response.statusCode).toBeNull();
    expect(response.error).toMatch(/^url_not_allowed: host rebound\.example resolves to 127\.0\.0\.1 \(loopback\)/);
    const mixed = await sendDelivery(claimed("https://mixed.example/x"), {
      ...options,
      allowPrivate: false,
      resolve: async () => [
        { address: "93.184.216.34", family: 4 },
        { address: "10.0.0.1", family: 4 },
      ],
    });
    expect(mixed.response.error).toMatch(/url_not_allowed: .*10\.0\.0\.1 \(private\)/);
    expect(receiver.received.length).toBe(before);
  });

  it.each([
    ["::7f00:1", "ipv4Compatible loopback"],
    ["::127.0.0.1", "ipv4Compatible loopback"],
    ["::a9fe:a9fe", "ipv4Compatible linkLocal"],
    ["64:ff9b::7f00:1", "rfc6052 loopback"],
    ["2002:a00:1::1", "6to4 private"],
  ])("refuses a name that now resolves to %s (IPv4 embedded in IPv6), without connecting", async (address, range) => {
    const before = receiver.received.length;
    const { response } = await sendDelivery(claimed(`https://embedded.example:${receiver.port}/x`), {
      ...options,
      allowPrivate: false,
      resolve: async () => [{ address, family: 6 }],
    });
    expect(response.statusCode).toBeNull();
    expect(response.error).toBe(`url_not_allowed: host embedded.example resolves to ${address} (${range}), not a public address`);
    expect(receiver.received.length).toBe(before);
  });

  it("connects to the address it checked, keeping the URL's host in the Host header", async () => {
    const secret = generateWebhookSecret();
    receiver.trust(secret);
    let lookups = 0;
    const { response } = await sendDelivery(claimed(`http://hooks.customer.example:${receiver.port}/pinned`, secret), {
      ...options,
      allowPrivate: true,
      resolve: async () => {
        lookups++;
        return [{ address: "127.0.0.1", family: 4 }];
      },
    });
    expect(response.statusCode).toBe(204);
    expect(lookups).toBe(1);
    const [request] = receiver.on("/pinned");
    expect(request!.host).toBe(`hooks.customer.example:${receiver.port}`);
    expect(request!.verified).toBe(true);
  });
});

describe("the worker's life cycle", () => {
  it("stop() cuts a hanging attempt short after its grace and gives the claim back; periodic tasks run until then", async () => {
    await worker.stop(0);
    const project = await ctx.importProject();
    const created = await createWebhook(project, { url: `${receiver.url}/stuck` });
    receiver.answer((request) => (request.path === "/stuck" ? { hang: true } : {}));
    let runs = 0;
    const second = new WebhookWorker(
      { db: ctx.db, config: { ...ctx.deps.config, WEBHOOK_TIMEOUT_SECONDS: 30 }, logger: ctx.deps.logger },
      { tasks: [{ name: "count", intervalMs: 20, run: async () => void runs++ }] },
    );
    try {
      await second.start();
      await record(project, [featureEvent(1)]);
      await receiver.waitFor(() => receiver.on("/stuck").length >= 1);
      // At least the hanging one: deliveries earlier tests left due (retries) may be under way too.
      expect(second.activeAttempts).toBeGreaterThanOrEqual(1);
      // The delivery can reach the receiver within one 20 ms interval: let the task come round
      // again before stopping, so that "run until then" is not a race with the delivery's speed.
      await vi.waitFor(() => expect(runs).toBeGreaterThan(1), { timeout: 2000, interval: 10 });
      const started = performance.now();
      await second.stop(200);
      const stopMs = performance.now() - started;
      expect(stopMs).toBeLessThan(1500);
      const delivery = (await deliveries(project, created.id))[0]!;
      expect(delivery).toMatchObject({ status: "pending", attempts: 1, last_error: "attempt interrupted: worker stopped" });
      expect(Date.parse(delivery.next_attempt_at!)).toBeLessThanOrEqual(Date.now() + 1000);
      const row = await ctx.db
        .selectFrom("webhook_deliveries")
        .select("claim_token")
        .where("id", "=", String(delivery.id))
        .executeTakeFirstOrThrow();
      expect(row.claim_token).toBeNull();
      expect(runs).toBeGreaterThan(1);
      const runsAtStop = runs;
      await quiet(100);
      expect(runs).toBe(runsAtStop);
    } finally {
      receiver.answer(() => ({}));
      await second.stop(0);
      await expectStatus(await ctx.send("DELETE", admin(project, `/webhooks/${created.id}`), project.secretKey), 200);
    }
  });
});
