/**
 * Erasure scrubs what the service stored about the voter (owner-api-v3.md, Rules 3: "in every
 * stored event (so in the events feed and in every delivery not yet made) the voter's
 * display_name, email, company, sso_id, billing customer and subscription ids and the content of
 * their comments become null, while voter_id stays; voter.deleted carries the AdminVoterObject
 * with those fields already null; the delivery log keeps no request bodies. After the answer,
 * nothing an owner route returns names the voter.").
 *
 * Eve (SSO, with email, company, Stripe customer and subscription) comments, replies, has a reply
 * from Ann, deletes a comment of hers, votes, is banned and unbanned, gets an MRR override and a
 * new subscription from Stripe: every event type that can carry her data. Two webhooks on a real
 * receiver: /all (answers 204) and /echo (answers 500 echoing the body, so its log's last_error
 * holds her data, then paused with its retries pending). Eve is erased; /echo is enabled again and
 * answers 204, and one of /all's deliveries of her comment is redelivered. Asserted by searching
 * the serialized JSON for her strings: the events feed, the stored events, both delivery logs,
 * every request the receiver got after the erasure, and the owner's comment and voter lists.
 */
import { randomBytes } from "node:crypto";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebhookWorker } from "../src/events/webhook-worker.ts";
import { postStripe, signStripe, stripeEvent, stripeSubscription, unix } from "./support/billing.fixture.ts";
import { adminPath, allEvents, expectStatus, publicPath } from "./support/events.fixture.ts";
import { type Answer, createTestContext, type ImportedProject, type Schemas, type TestContext } from "./support/harness.ts";

type Delivery = Schemas["DeliveryObject"];

import { type ReceivedRequest, startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver.ts";

const SSO_SECRET = `erasure-sso-${randomBytes(16).toString("hex")}`;
const STRIPE_SECRET = `whsec_${randomBytes(24).toString("base64")}`;
const tag = randomBytes(4).toString("hex");
/** Everything of Eve's that must be gone; unique to this run, so a match is hers. */
const EVE = {
  name: `Eve Erasable ${tag}`,
  email: `eve.erase.${tag}@example.com`,
  company: `Erasable Corp ${tag}`,
  sso: `eve-sso-sub-${tag}`,
  customer: `cus_EVEERASE${tag}`,
  subscription: `sub_EVEERASE${tag}`,
  newSubscription: `sub_EVENEW${tag}`,
  comment: `Eve secret comment ${tag}`,
  reply: `Eve reply text ${tag}`,
  deleted: `Eve deleted comment ${tag}`,
};
const PERSONAL = Object.values(EVE);
/** What Ann writes stays: it is hers. */
const ANN_TOPIC = `Ann topic ${tag}`;

let ctx: TestContext;
let receiver: WebhookReceiver;
let worker: WebhookWorker;
let project: ImportedProject;
let all: Schemas["WebhookWithSecretObject"];
let echo: Schemas["WebhookWithSecretObject"];
let eveId: string;
/** Where the receiver's list stood when the erasure was answered. */
let mark: number;
let logBefore: Delivery[];
/** /echo's log right after the erasure, its failed attempts not yet made again. */
let logErased: Delivery[];
/** The event of /all's delivery redelivered after the erasure (Eve's first comment). */
let redeliveredEventId: string;
let eveBefore: Schemas["AdminVoterObject"];

const annToken = `anon_${randomBytes(18).toString("base64url")}`;
let eveToken: string;
let echoFailing = true;

const adminGet = async (path: string) => (await expectStatus(await ctx.get(adminPath(project, path), project.secretKey), 200)).data;
const adminSend = async (method: string, path: string, payload: unknown, status = 200) =>
  (await expectStatus(await ctx.send(method, adminPath(project, path), project.secretKey, payload), status)).data;
const asEve = () => ({ "X-VF-Token": eveToken });
const asAnn = () => ({ "X-VF-Anon": annToken });
const publicSend = async (method: string, path: string, headers: Record<string, string>, payload: unknown, status: number) =>
  (await expectStatus(await ctx.send(method, publicPath(project, path), project.secretKey, payload, headers), status)).data;
const deliveryLog = (webhookId: number): Promise<Delivery[]> => adminGet(`/webhooks/${webhookId}/deliveries?per_page=100`);
/** The personal strings `value` still holds once serialized. */
const leaks = (value: unknown) => PERSONAL.filter((text) => JSON.stringify(value).includes(text));

async function until<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  ctx = await createTestContext({
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    WEBHOOK_POLL_INTERVAL_MS: "50",
    // Long enough that /echo's failing deliveries are still pending when it is paused.
    WEBHOOK_RETRY_SCHEDULE_SECONDS: "1,2,3,3,3",
    WEBHOOK_TIMEOUT_SECONDS: "1.5",
    WEBHOOK_DISABLE_AFTER_FAILURES: "100",
    WEBHOOK_CONCURRENCY: "8",
    WEBHOOK_CONCURRENCY_PER_WEBHOOK: "3",
  });
  receiver = await startWebhookReceiver();
  receiver.answer((request) => (request.path === "/echo" && echoFailing ? { status: 500, body: request.body } : {}));
  worker = new WebhookWorker({ db: ctx.db, config: ctx.deps.config, logger: ctx.deps.logger });
  await worker.start();

  project = await ctx.importProject({
    project: { sso_secret: SSO_SECRET, stripe_webhook_secret: STRIPE_SECRET },
    tiers: [{ ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 2, stripe_price_ids: [`price_${tag}`] }],
    voters: [
      {
        ref: "eve",
        kind: "sso",
        sso_id: EVE.sso,
        display_name: EVE.name,
        email: EVE.email,
        company: EVE.company,
        stripe_customer_id: EVE.customer,
        subscription_id: EVE.subscription,
        subscription_status: "active",
      },
      { ref: "ann", kind: "anonymous", anon_token: annToken, display_name: "Ann" },
    ],
    features: [
      { ref: "f1", board: "roadmap", column: "c-planned", heading: "One" },
      { ref: "f2", board: "roadmap", column: "c-planned", heading: "Two" },
    ],
  });
  eveId = project.ids.ids.voters.eve;
  eveToken = await new SignJWT({ sub: EVE.sso, name: EVE.name, email: EVE.email })
    .setProtectedHeader({ alg: "HS256" })
    .setExpirationTime(Math.floor(Date.now() / 1000) + 600)
    .sign(new TextEncoder().encode(SSO_SECRET));
  all = await adminSend("POST", "/webhooks", { url: `${receiver.url}/all` }, 201);
  echo = await adminSend("POST", "/webhooks", { url: `${receiver.url}/echo` }, 201);
  receiver.trust(all.secret);
  receiver.trust(echo.secret);

  const f1 = project.ids.ids.features.f1;
  const f2 = project.ids.ids.features.f2;
  // comment.created: Eve's comment, Ann's reply to it, Ann's topic and Eve's reply to it.
  const eveComment = await publicSend("POST", `/features/${f1}/comments`, asEve(), { content: EVE.comment }, 201);
  await publicSend("POST", `/features/${f1}/comments`, asAnn(), { content: `Ann answers ${tag}`, parent_id: eveComment.id }, 201);
  const annTopic = await publicSend("POST", `/features/${f2}/comments`, asAnn(), { content: ANN_TOPIC }, 201);
  await publicSend("POST", `/features/${f2}/comments`, asEve(), { content: EVE.reply, parent_id: annTopic.id }, 201);
  // comment.created + comment.deleted of a comment Eve deletes herself (its row is gone at the erasure).
  const gone = await publicSend("POST", `/features/${f2}/comments`, asEve(), { content: EVE.deleted }, 201);
  await publicSend("DELETE", `/comments/${gone.id}`, asEve(), undefined, 200);
  // vote.created x2 (voter_id only).
  await publicSend("POST", `/features/${f1}/vote`, asEve(), undefined, 200);
  await publicSend("POST", `/features/${f2}/vote`, asEve(), undefined, 200);
  // voter.banned / unbanned / billing_changed (owner), billing_changed with the subscription id (Stripe).
  await adminSend("PATCH", `/voters/${eveId}`, { banned: true });
  await adminSend("PATCH", `/voters/${eveId}`, { banned: false });
  await adminSend("PATCH", `/voters/${eveId}`, { mrr_override_cents: 2500 });
  const subscription = stripeSubscription({ id: EVE.newSubscription, customer: EVE.customer, status: "active", price: `price_${tag}` });
  const event = JSON.stringify(stripeEvent("customer.subscription.updated", subscription, unix(new Date().toISOString())));
  await expectStatus(await postStripe(ctx, project.slug, event, signStripe(event, STRIPE_SECRET)), 200);

  const events = await allEvents(ctx, project, 12);
  expect(events.map((e) => e.type).sort()).toEqual(
    [
      ...Array(5).fill("comment.created"),
      "comment.deleted",
      "vote.created",
      "vote.created",
      "voter.banned",
      "voter.unbanned",
      "voter.billing_changed",
      "voter.billing_changed",
    ].sort(),
  );
  // Every event reached /all, and /echo at least once (failing, retries pending), before the erasure.
  const ids = events.map((e) => e.id);
  await receiver.waitFor(
    () => ids.every((id) => receiver.on("/all").some((r) => r.id === id) && receiver.on("/echo").some((r) => r.id === id)),
    15_000,
  );
  // Paused: /echo's retries wait, not yet made, until it is enabled again after the erasure.
  await adminSend("PATCH", `/webhooks/${echo.id}`, { enabled: false });
  // No attempt under way (a paused delivery is pending with no next attempt), so every request
  // the receiver gets from here on was made after the erasure.
  await until(async () => (await deliveryLog(all.id)).filter((d) => d.status === "succeeded").length >= ids.length, "/all settled");
  // (On a shared Postgres another test file's worker, with a shorter retry schedule, may have
  // failed some for good already: those are made, and stay as they are.)
  await until(
    async () => (await deliveryLog(echo.id)).every((d) => d.status === "failed" || (d.status === "pending" && d.next_attempt_at === null)),
    "/echo paused",
  );
  logBefore = await deliveryLog(echo.id);
  eveBefore = await adminGet(`/voters/${eveId}`);

  mark = receiver.received.length;
  await adminSend("DELETE", `/voters/${eveId}`, undefined);
  logErased = await deliveryLog(echo.id);
  echoFailing = false;
  // voter.deleted dispatched (to /all) while /echo is still disabled: /echo never gets it.
  await until(async () => (await deliveryLog(all.id)).some((d) => d.event_type === "voter.deleted"), "voter.deleted dispatched");
  await adminSend("PATCH", `/webhooks/${echo.id}`, { enabled: true });
  // A delivery of /all made before the erasure, asked again after it.
  const allLog = await deliveryLog(all.id);
  const commentDelivery = allLog.find((d) => d.event_id === events.find((e) => e.type === "comment.created")!.id)!;
  redeliveredEventId = commentDelivery.event_id;
  await adminSend("POST", `/webhooks/${all.id}/deliveries/${commentDelivery.id}/redeliver`, undefined, 202);

  // Settled: nothing pending (a delivery whose retries ran out before the pause stays failed).
  await until(
    async () => {
      const [toAll, toEcho] = await Promise.all([deliveryLog(all.id), deliveryLog(echo.id)]);
      const settled = [...toAll, ...toEcho].every((d) => d.status !== "pending");
      // /echo was disabled when voter.deleted was made: it is not queued for it (owner-api-v3.md).
      return settled && toAll.length === ids.length + 2 && toEcho.length === ids.length;
    },
    "every delivery made after the erasure",
    30_000,
  );
}, 90_000);

afterAll(async () => {
  await worker?.stop(0);
  await receiver?.close();
  await ctx?.close();
});

const after = (): ReceivedRequest[] => receiver.received.slice(mark);

describe("erasure scrubs the voter from stored events and deliveries (Rules 3)", () => {
  it("had Eve's data in the events and the echoing receiver's log before the erasure", () => {
    expect(eveBefore).toMatchObject({
      email: EVE.email,
      company: EVE.company,
      sso_id: EVE.sso,
      stripe_customer_id: EVE.customer,
      matched_on: "stripe",
    });
    expect(leaks(receiver.received.slice(0, mark).map((r) => r.body))).toEqual(PERSONAL);
    expect(leaks(logBefore.map((d) => d.last_error)).length).toBeGreaterThan(0);
  });

  it("lists no personal field in GET /events, keeping voter_id, with voter.deleted scrubbed", async () => {
    const events = await allEvents(ctx, project, 13);
    expect(leaks(events)).toEqual([]);
    const eves = events.filter((e) => e.type.startsWith("voter.") || e.type.startsWith("vote."));
    expect(eves.length).toBe(7);
    for (const event of eves) expect(event.data.object.voter_id).toBe(eveId);
    for (const event of events.filter((e) => e.type.startsWith("voter."))) {
      expect(event.data.object).toMatchObject({
        display_name: null,
        email: null,
        company: null,
        sso_id: null,
        customer_id: null,
        matched_on: null,
        stripe_customer_id: null,
        paddle_customer_id: null,
        subscription_id: null,
      });
    }
    const [deleted] = events.filter((e) => e.type === "voter.deleted");
    const personal = [
      "display_name",
      "email",
      "company",
      "sso_id",
      "customer_id",
      "matched_on",
      "stripe_customer_id",
      "paddle_customer_id",
      "subscription_id",
    ];
    const rest = Object.fromEntries(Object.entries(eveBefore).filter(([field]) => !personal.includes(field)));
    expect(deleted.data).toEqual({ object: { ...rest, ...Object.fromEntries(personal.map((f) => [f, null])) }, changes: null });
    const stripeChange = events.filter((e) => e.type === "voter.billing_changed").find((e) => e.data.changes.subscription_id);
    expect(stripeChange.data.changes.subscription_id).toEqual({ from: null, to: null });
    // Eve's comments: content and author name null; Ann's comments untouched.
    const comments = events.filter((e) => e.type.startsWith("comment."));
    const eveComments = comments.filter((e) => e.data.object.content === null);
    expect(eveComments.map((e) => e.type).sort()).toEqual(["comment.created", "comment.created", "comment.created", "comment.deleted"]);
    for (const event of eveComments) expect(event.data.object.author_name).toBeNull();
    expect(comments.filter((e) => e.data.object.content !== null).map((e) => [e.data.object.content, e.data.object.author_name])).toEqual([
      [`Ann answers ${tag}`, "Ann"],
      [ANN_TOPIC, "Ann"],
    ]);
  });

  it("stores no personal field in any event row of the project", async () => {
    const rows = await ctx.db
      .selectFrom("events")
      .innerJoin("projects", "projects.id", "events.project_id")
      .select("events.data")
      .where("projects.slug", "=", project.slug)
      .execute();
    expect(rows.length).toBe(13);
    expect(leaks(rows)).toEqual([]);
  });

  it("sends only scrubbed events after the erasure: retries, a redelivery and voter.deleted", () => {
    const requests = after();
    const waiting = logErased.filter((d) => d.status === "pending").map((d) => d.event_id);
    // /echo's retries not yet made, /all's voter.deleted and its redelivery.
    expect(requests.length).toBeGreaterThanOrEqual(waiting.length + 2);
    expect(requests.every((r) => r.verified)).toBe(true);
    expect(leaks(requests.map((r) => [r.body, r.headers]))).toEqual([]);
    const deletedTo = (path: string) => requests.filter((r) => r.path === path && r.payload.type === "voter.deleted");
    const [deleted] = deletedTo("/all");
    expect(deleted).toBeDefined();
    expect(deleted!.payload.data.object).toMatchObject({ voter_id: eveId, display_name: null, email: null, company: null, sso_id: null });
    // /echo's retries of the events made before the erasure, with voter_id kept where there was one.
    const echoed = requests.filter((r) => r.path === "/echo");
    expect(waiting.length).toBeGreaterThan(0);
    expect(new Set(echoed.map((r) => r.id))).toEqual(new Set(waiting));
    expect(echoed.filter((r) => r.payload.type.startsWith("vote")).every((r) => r.payload.data.object.voter_id === eveId)).toBe(true);
    const redelivered = requests.filter((r) => r.path === "/all" && r.id === redeliveredEventId);
    expect(redelivered.length).toBeGreaterThanOrEqual(1);
    expect(redelivered[0]!.payload.data.object).toMatchObject({ content: null, author_name: null });
  });

  it("keeps no request body or echo of one in either delivery log", async () => {
    const logs = [...(await deliveryLog(all.id)), ...(await deliveryLog(echo.id))];
    expect(leaks(logs)).toEqual([]);
    expect(logs.some((d) => "body" in d)).toBe(false);
    // Right after the erasure, the failed attempts' log keeps their status, not the echoed body.
    expect(logErased).toHaveLength(12);
    expect(leaks(logErased)).toEqual([]);
    // Eve's events' attempts keep "HTTP 500" (their echoes had her data); the others keep theirs.
    const echoedEve = logBefore.filter((d) => leaks(d.last_error).length > 0);
    expect(echoedEve.length).toBeGreaterThan(0);
    for (const before of echoedEve) {
      expect(logErased.find((d) => d.id === before.id)).toMatchObject({ last_status_code: 500, last_error: "HTTP 500" });
    }
  });

  it("names Eve in no other owner route: voters, comments", async () => {
    expect(await adminGet(`/voters?q=${encodeURIComponent(EVE.email)}`)).toEqual([]);
    const comments = await adminGet("/comments?per_page=100");
    expect(leaks(comments)).toEqual([]);
    expect(comments.map((c: Answer<"/api/v3/projects/{slug}/admin/comments", "get">["data"][number]) => c.content)).toEqual([ANN_TOPIC]);
  });
});

describe("erasure racing the voter's own writes and the owner's", () => {
  it("leaves no personal field in any event, whichever commits first (10 rounds)", async () => {
    const rounds = 10;
    const tokens = Array.from({ length: rounds }, () => `anon_${randomBytes(18).toString("base64url")}`);
    const racing = await ctx.importProject({
      voters: tokens.map((token, i) => ({
        ref: `r${i}`,
        kind: "anonymous",
        anon_token: token,
        display_name: `Racer ${tag} ${i}`,
        email: `racer.${tag}.${i}@example.com`,
        company: `Race Corp ${tag} ${i}`,
      })),
      features: [{ ref: "f", board: "roadmap", column: "c-planned", heading: "Race" }],
    });
    const feature = racing.ids.ids.features.f;
    const send = (method: string, path: string, payload?: unknown, headers?: Record<string, string>) =>
      ctx.send(method, path, racing.secretKey, payload, headers);
    for (let i = 0; i < rounds; i++) {
      const id = racing.ids.ids.voters[`r${i}`];
      const answers = await Promise.all([
        send(
          "POST",
          publicPath(racing, `/features/${feature}/comments`),
          { content: `Racer text ${tag} ${i}` },
          { "X-VF-Anon": tokens[i]! },
        ),
        send("PATCH", adminPath(racing, `/voters/${id}`), { banned: true }),
        send("DELETE", adminPath(racing, `/voters/${id}`)),
        send("PATCH", adminPath(racing, `/voters/${id}`), { mrr_override_cents: 100 + i }),
      ]);
      expect(answers[2]!.status).toBe(200);
      // Before the erasure: done; after it: the voter is gone (401 for its token, 404 for the owner).
      expect([201, 401, 404]).toContain(answers[0]!.status);
      expect([200, 404]).toContain(answers[1]!.status);
      expect([200, 404]).toContain(answers[3]!.status);
    }
    const events = await allEvents(ctx, racing, rounds);
    expect(events.filter((e) => e.type === "voter.deleted")).toHaveLength(rounds);
    const serialized = JSON.stringify(events);
    for (let i = 0; i < rounds; i++) {
      for (const text of [`Racer ${tag} ${i}`, `racer.${tag}.${i}@example.com`, `Race Corp ${tag} ${i}`, `Racer text ${tag} ${i}`]) {
        expect(serialized.includes(text), text).toBe(false);
      }
    }
  });
});
