/**
 * Owner webhook routes (owner-api-v3.md, /webhooks...; "Webhooks"): WebhookObject with the
 * secret only in create and rotate answers, validation (422 naming url or events, url_not_allowed
 * for private addresses while they are not allowed), partial PATCH with enable/disable, 404 for
 * another project's ids, the ping (one attempt, signed, filter ignored, never retried), the
 * delivery log (newest first, status filter, paging) and redeliver (202, a new pending delivery).
 */
import { sql } from "kysely";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventPosition } from "../src/events/outbox.ts";
import { createTestContext, type ImportedProject, type Schemas, type TestContext } from "./support/harness.ts";
import { expectStatus } from "./support/owner-accounts.fixture.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver.ts";

let ctx: TestContext;
let strict: TestContext;
let receiver: WebhookReceiver;

beforeAll(async () => {
  ctx = await createTestContext({ WEBHOOK_ALLOW_PRIVATE_URLS: "true", WEBHOOK_TIMEOUT_SECONDS: "2" });
  strict = await createTestContext({ WEBHOOK_ALLOW_PRIVATE_URLS: "false" });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
  await ctx.close();
  await strict.close();
});

type Delivery = Schemas["DeliveryObject"];
/** A create body: the document lists the defaulted fields as present; a client may leave them out. */
type WebhookFields = Pick<Schemas["CreateWebhookBody"], "url"> & Partial<Schemas["CreateWebhookBody"]>;

const admin = (project: ImportedProject, path: string) => `/api/v3/projects/${project.slug}/admin${path}`;

async function createWebhook(
  project: ImportedProject,
  body: WebhookFields,
  on: TestContext = ctx,
): Promise<Schemas["WebhookWithSecretObject"]> {
  return (await expectStatus(await on.send("POST", admin(project, "/webhooks"), project.secretKey, body), 201)).data;
}

describe("owner webhooks: create, read, change, delete", () => {
  it("creates a webhook (201 with its whsec_ secret), which reads never show again", async () => {
    const project = await ctx.importProject();
    const created = await createWebhook(project, {
      url: `${receiver.url}/a`,
      events: ["feature.created", "vote.created"],
      description: "CRM",
    });
    expect(created).toEqual({
      id: expect.any(Number),
      url: `${receiver.url}/a`,
      events: ["feature.created", "vote.created"],
      description: "CRM",
      enabled: true,
      disabled_reason: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const { secret, ...shown } = created;
    const one = await expectStatus(await ctx.get(admin(project, `/webhooks/${created.id}`), project.secretKey), 200);
    expect(one.data).toEqual(shown);
    const list = await expectStatus(await ctx.get(admin(project, "/webhooks"), project.secretKey), 200);
    expect(list.data).toEqual([shown]);
    expect(list.meta).toMatchObject({ page: 1, total: 1 });
    expect(JSON.stringify(list)).not.toContain(secret);
    // The secret is stored to sign, as given.
    const stored = await ctx.db.selectFrom("webhooks").select("secret").where("id", "=", created.id).executeTakeFirstOrThrow();
    expect(stored.secret).toBe(secret);
  });

  it("defaults events to [] (every type) and description to null", async () => {
    const project = await ctx.importProject();
    const created = await createWebhook(project, { url: `${receiver.url}/b` });
    expect(created).toMatchObject({ events: [], description: null, enabled: true });
  });

  it.each([
    [{}, "url"],
    [{ url: "" }, "url"],
    [{ url: "hooks" }, "url"],
    [{ url: "ftp://127.0.0.1/x" }, "url"],
    [{ url: "https://u:p@127.0.0.1/" }, "url"],
    [{ url: "https://127.0.0.1/", events: ["feature.created", "feature.exploded"] }, "events"],
    [{ url: "https://127.0.0.1/", events: ["ping"] }, "events"],
    [{ url: "https://127.0.0.1/", events: ["vote.created", "vote.created"] }, "events"],
    [{ url: "https://127.0.0.1/", events: "vote.created" }, "events"],
    [{ url: "https://127.0.0.1/", secret: "whsec_mine" }, "secret"],
    [{ url: "https://127.0.0.1/", enabled: false }, "enabled"],
  ])("refuses %j with 422 validation_failed naming %s, creating nothing", async (payload, field) => {
    const project = await ctx.importProject();
    const refused = await expectStatus(await ctx.send("POST", admin(project, "/webhooks"), project.secretKey, payload), 422);
    expect(refused.error).toMatchObject({ code: "validation_failed", field });
    const list = await expectStatus(await ctx.get(admin(project, "/webhooks"), project.secretKey), 200);
    expect(list.meta.total).toBe(0);
  });

  it("names the unknown event type and lists the known ones", async () => {
    const project = await ctx.importProject();
    const refused = await expectStatus(
      await ctx.send("POST", admin(project, "/webhooks"), project.secretKey, { url: `${receiver.url}/x`, events: ["feature.exploded"] }),
      422,
    );
    expect(refused.error.message).toContain('"feature.exploded"');
    expect(refused.error.message).toContain("release.published");
  });

  it("changes fields partially; null clears the description; an unknown key is refused", async () => {
    const project = await ctx.importProject();
    const created = await createWebhook(project, { url: `${receiver.url}/c`, description: "old" });
    const path = admin(project, `/webhooks/${created.id}`);
    const changed = await expectStatus(
      await ctx.send("PATCH", path, project.secretKey, { events: ["release.published"], description: null }),
      200,
    );
    expect(changed.data).toMatchObject({ url: `${receiver.url}/c`, events: ["release.published"], description: null, enabled: true });
    expect(changed.data.secret).toBeUndefined();
    const unknown = await expectStatus(await ctx.send("PATCH", path, project.secretKey, { secret: "x" }), 422);
    expect(unknown.error).toMatchObject({ code: "validation_failed", field: "secret" });
    const bad = await expectStatus(await ctx.send("PATCH", path, project.secretKey, { events: ["nope"] }), 422);
    expect(bad.error.field).toBe("events");
    const after = await expectStatus(await ctx.get(path, project.secretKey), 200);
    expect(after.data.events).toEqual(["release.published"]);
  });

  it("disabling by the owner leaves disabled_reason null; enabling clears a service-set reason and the failure run", async () => {
    const project = await ctx.importProject();
    const created = await createWebhook(project, { url: `${receiver.url}/d` });
    const path = admin(project, `/webhooks/${created.id}`);
    const off = await expectStatus(await ctx.send("PATCH", path, project.secretKey, { enabled: false }), 200);
    expect(off.data).toMatchObject({ enabled: false, disabled_reason: null });
    await ctx.db
      .updateTable("webhooks")
      .set({ disabled_reason: "failing", consecutive_failures: 100 })
      .where("id", "=", created.id)
      .execute();
    const on = await expectStatus(await ctx.send("PATCH", path, project.secretKey, { enabled: true }), 200);
    expect(on.data).toMatchObject({ enabled: true, disabled_reason: null });
    const row = await ctx.db.selectFrom("webhooks").select("consecutive_failures").where("id", "=", created.id).executeTakeFirstOrThrow();
    expect(row.consecutive_failures).toBe(0);
  });

  it("deletes a webhook with its deliveries; then it is not found", async () => {
    const project = await ctx.importProject();
    const created = await createWebhook(project, { url: `${receiver.url}/e` });
    const path = admin(project, `/webhooks/${created.id}`);
    await expectStatus(await ctx.send("POST", `${path}/test`, project.secretKey), 200);
    const deleted = await expectStatus(await ctx.send("DELETE", path, project.secretKey), 200);
    expect(deleted.data).toEqual({ deleted: true, id: created.id });
    expect((await ctx.get(path, project.secretKey)).status).toBe(404);
    const left = await ctx.db.selectFrom("webhook_deliveries").select("id").where("webhook_id", "=", created.id).execute();
    expect(left).toEqual([]);
  });

  it("rotate-secret answers a new secret once; reads still hide it", async () => {
    const project = await ctx.importProject();
    const created = await createWebhook(project, { url: `${receiver.url}/f` });
    const path = admin(project, `/webhooks/${created.id}`);
    const rotated = await expectStatus(await ctx.send("POST", `${path}/rotate-secret`, project.secretKey), 200);
    expect(rotated.data.secret).toMatch(/^whsec_/);
    expect(rotated.data.secret).not.toBe(created.secret);
    expect((await expectStatus(await ctx.get(path, project.secretKey), 200)).data.secret).toBeUndefined();
    const row = await ctx.db
      .selectFrom("webhooks")
      .select(["secret", "previous_secret", sql<number>`extract(epoch from previous_secret_expires_at - now())`.as("overlap")])
      .where("id", "=", created.id)
      .executeTakeFirstOrThrow();
    expect(row.secret).toBe(rotated.data.secret);
    expect(row.previous_secret).toBe(created.secret);
    expect(Number(row.overlap)).toBeGreaterThan(24 * 3600 - 60);
    expect(Number(row.overlap)).toBeLessThanOrEqual(24 * 3600);
  });

  it("answers 404 for a webhook or delivery of another project, on every route", async () => {
    const mine = await ctx.importProject();
    const theirs = await ctx.importProject();
    const foreign = await createWebhook(theirs, { url: `${receiver.url}/g` });
    const ping = await expectStatus(await ctx.send("POST", admin(theirs, `/webhooks/${foreign.id}/test`), theirs.secretKey), 200);
    const base = admin(mine, `/webhooks/${foreign.id}`);
    const calls: [string, string, unknown?][] = [
      ["GET", base],
      ["PATCH", base, { description: "mine now" }],
      ["PATCH", base, { url: "https://10.0.0.1/" }],
      ["DELETE", base],
      ["POST", `${base}/rotate-secret`],
      ["POST", `${base}/test`],
      ["GET", `${base}/deliveries`],
      ["POST", `${base}/deliveries/${ping.data.id}/redeliver`],
    ];
    for (const [method, path, payload] of calls) {
      const response = method === "GET" ? await ctx.get(path, mine.secretKey) : await ctx.send(method, path, mine.secretKey, payload);
      const envelope = await expectStatus(response, 404);
      expect(envelope.error.code, `${method} ${path}`).toBe("not_found");
    }
    // Their webhook is untouched and its ping was not redelivered.
    const still = await expectStatus(await ctx.get(admin(theirs, `/webhooks/${foreign.id}`), theirs.secretKey), 200);
    expect(still.data.description).toBeNull();
    const log = await expectStatus(await ctx.get(admin(theirs, `/webhooks/${foreign.id}/deliveries`), theirs.secretKey), 200);
    expect(log.meta.total).toBe(1);
  });

  it("refuses the embed key (403 not_allowed)", async () => {
    const project = await ctx.importProject();
    const refused = await expectStatus(await ctx.get(admin(project, "/webhooks"), project.embedKey), 403);
    expect(refused.error.code).toBe("not_allowed");
  });
});

describe("owner webhooks: the SSRF guard at create and change (WEBHOOK_ALLOW_PRIVATE_URLS=false)", () => {
  it.each([
    "https://127.0.0.1/hook",
    "https://localhost/hook",
    "https://10.0.0.7/hook",
    "https://192.168.1.20/hook",
    "https://169.254.169.254/latest/meta-data",
    "https://[::1]/hook",
    "https://[fd00::5]/hook",
    "https://[::ffff:10.0.0.1]/hook",
    "https://2130706433/hook",
    "https://100.64.1.1/hook",
    // IPv6 forms that embed a loopback, private or link-local IPv4 address.
    "https://[::127.0.0.1]/hook",
    "https://[::7f00:1]/hook",
    "https://[::169.254.169.254]/latest/meta-data",
    "https://[::ffff:0:10.0.0.1]/hook",
    "https://[64:ff9b::127.0.0.1]/hook",
    "https://[64:ff9b::192.168.0.1]/hook",
    "https://[2002:7f00:1::1]/hook",
    "https://[2002:a9fe:a9fe::]/hook",
  ])("refuses %s with 422 url_not_allowed naming url", async (url) => {
    const project = await strict.importProject();
    const refused = await expectStatus(await strict.send("POST", admin(project, "/webhooks"), project.secretKey, { url }), 422);
    expect(refused.error).toMatchObject({ code: "url_not_allowed", field: "url" });
    const list = await expectStatus(await strict.get(admin(project, "/webhooks"), project.secretKey), 200);
    expect(list.meta.total).toBe(0);
  });

  it("refuses http (validation_failed naming url), and a PATCH to a private address changes nothing", async () => {
    const project = await strict.importProject();
    const http = await expectStatus(
      await strict.send("POST", admin(project, "/webhooks"), project.secretKey, { url: "http://93.184.216.34/" }),
      422,
    );
    expect(http.error).toMatchObject({ code: "validation_failed", field: "url" });
    // A public literal address needs no DNS: accepted.
    const created = await createWebhook(project, { url: "https://93.184.216.34/hook" }, strict);
    const path = admin(project, `/webhooks/${created.id}`);
    const refused = await expectStatus(
      await strict.send("PATCH", path, project.secretKey, { url: "https://127.0.0.1/", description: "x" }),
      422,
    );
    expect(refused.error).toMatchObject({ code: "url_not_allowed", field: "url" });
    const after = await expectStatus(await strict.get(path, project.secretKey), 200);
    expect(after.data).toMatchObject({ url: "https://93.184.216.34/hook", description: null });
  });
});

describe("owner webhooks: ping, delivery log, redeliver", () => {
  it("POST test sends one signed ping (filter ignored) and answers its succeeded delivery", async () => {
    const project = await ctx.importProject();
    const created = await createWebhook(project, { url: `${receiver.url}/ping-ok`, events: ["release.published"] });
    receiver.trust(created.secret);
    const answered = await expectStatus(await ctx.send("POST", admin(project, `/webhooks/${created.id}/test`), project.secretKey), 200);
    expect(answered.data).toEqual({
      id: expect.any(Number),
      webhook_id: created.id,
      // An event id like every other (owner-api-v3.md lists ping among the event types).
      event_id: expect.stringMatching(/^evt_[0-9a-hjkmnp-tv-z]{26}$/),
      event_type: "ping",
      status: "succeeded",
      attempts: 1,
      last_status_code: 204,
      last_error: null,
      last_duration_ms: expect.any(Number),
      next_attempt_at: null,
      created_at: expect.any(String),
    });
    const [ping] = receiver.on("/ping-ok");
    expect(ping).toBeDefined();
    expect(ping!.verified).toBe(true);
    expect(ping!.id).toBe(answered.data.event_id);
    expect(ping!.headers["webhook-id"]).toBe(answered.data.event_id);
    // The EventObject: id, type, created_at, project, data; nothing else.
    expect(ping!.payload).toEqual({
      id: answered.data.event_id,
      type: "ping",
      created_at: answered.data.created_at,
      project: project.slug,
      data: { object: { ...created, secret: undefined }, changes: null },
    });
    // Its id names a position GET /events takes as `after` (same format as the feed's ids).
    expect(eventPosition(ping!.id)).not.toBeNull();
    await expectStatus(await ctx.get(admin(project, `/events?after=${ping!.id}`), project.secretKey), 200);
    expect(ping!.payload.data.object.secret).toBeUndefined();
    expect(() => new Webhook(created.secret).verify(ping!.body, ping!.headers)).not.toThrow();
  });

  it("a failed ping is failed at once, with the status and an excerpt of the answer, and is not retried", async () => {
    const project = await ctx.importProject();
    const created = await createWebhook(project, { url: `${receiver.url}/ping-500` });
    receiver.answer((request) => (request.path === "/ping-500" ? { status: 500, body: "database on fire" } : {}));
    const answered = await expectStatus(await ctx.send("POST", admin(project, `/webhooks/${created.id}/test`), project.secretKey), 200);
    receiver.answer(() => ({}));
    expect(answered.data).toMatchObject({
      status: "failed",
      attempts: 1,
      last_status_code: 500,
      last_error: "HTTP 500: database on fire",
      next_attempt_at: null,
    });
    // A failed ping does not count towards the failures that disable the webhook.
    const row = await ctx.db.selectFrom("webhooks").select("consecutive_failures").where("id", "=", created.id).executeTakeFirstOrThrow();
    expect(row.consecutive_failures).toBe(0);
  });

  it("lists deliveries newest first, filters by status, pages; redeliver queues a new pending delivery", async () => {
    const project = await ctx.importProject();
    const created = await createWebhook(project, { url: `${receiver.url}/log` });
    const path = admin(project, `/webhooks/${created.id}`);
    // Disabled: no worker of the test run claims what is inserted below.
    await expectStatus(await ctx.send("PATCH", path, project.secretKey, { enabled: false }), 200);
    const statuses = ["succeeded", "failed", "pending", "succeeded", "failed"] as const;
    for (const [index, status] of statuses.entries()) {
      await ctx.db
        .insertInto("webhook_deliveries")
        .values({
          webhook_id: created.id,
          event_id: `evt_test${index}`,
          event_type: "vote.created",
          event_seq: String(900_000_000 + index),
          status,
          attempts: status === "pending" ? 0 : 1,
          last_status_code: status === "succeeded" ? 200 : status === "failed" ? 503 : null,
        })
        .execute();
    }
    const all = await expectStatus(await ctx.get(`${path}/deliveries`, project.secretKey), 200);
    expect(all.data.map((d: Delivery) => d.event_id)).toEqual(["evt_test4", "evt_test3", "evt_test2", "evt_test1", "evt_test0"]);
    expect(all.meta).toMatchObject({ total: 5, page: 1 });
    const failed = await expectStatus(await ctx.get(`${path}/deliveries?status=failed`, project.secretKey), 200);
    expect(failed.data.map((d: Delivery) => d.event_id)).toEqual(["evt_test4", "evt_test1"]);
    expect(failed.data.every((d: Delivery) => d.status === "failed" && d.last_status_code === 503)).toBe(true);
    const paged = await expectStatus(await ctx.get(`${path}/deliveries?per_page=2&page=2`, project.secretKey), 200);
    expect(paged.data.map((d: Delivery) => d.event_id)).toEqual(["evt_test2", "evt_test1"]);
    expect(paged.meta).toMatchObject({ total: 5, total_pages: 3, has_more: true });
    const badStatus = await expectStatus(await ctx.get(`${path}/deliveries?status=lost`, project.secretKey), 422);
    expect(badStatus.error).toMatchObject({ code: "validation_failed", field: "status" });

    const source = failed.data[0];
    const again = await expectStatus(await ctx.send("POST", `${path}/deliveries/${source.id}/redeliver`, project.secretKey), 202);
    expect(again.data).toMatchObject({
      webhook_id: created.id,
      event_id: source.event_id,
      event_type: "vote.created",
      status: "pending",
      attempts: 0,
      last_status_code: null,
      // Paused while the webhook is disabled.
      next_attempt_at: null,
    });
    expect(again.data.id).not.toBe(source.id);
    // The same event row (its EventObject is built when the attempt is made).
    const stored = await ctx.db
      .selectFrom("webhook_deliveries")
      .select(sql<string>`event_seq::text`.as("event_seq"))
      .where("id", "=", String(again.data.id))
      .executeTakeFirstOrThrow();
    expect(stored.event_seq).toBe(String(900_000_000 + Number(source.event_id.slice("evt_test".length))));
    const missing = await expectStatus(await ctx.send("POST", `${path}/deliveries/999999999/redeliver`, project.secretKey), 404);
    expect(missing.error.code).toBe("not_found");
    const pending = await expectStatus(await ctx.get(`${path}/deliveries?status=pending`, project.secretKey), 200);
    expect(pending.meta.total).toBe(2);
  });
});
