/**
 * Events to webhooks end to end (docs/contract/owner-api-v3.md, "Events" and "Webhooks"):
 * every event type of the table arrives with a valid signature and the right data.object and
 * changes, and a webhook's events filter is honoured.
 *
 * One project gets two webhooks on a real receiver (test/support/webhook-receiver.ts, which
 * verifies signatures with the standardwebhooks package): one for every type, one filtered to
 * vote.created and feature.deleted. Every event type of the table is then made through the real
 * public and owner routes, release.published both at once and at a scheduled time reached by the
 * BACKGROUND_TASKS task of the in-process worker, which also dispatches and delivers everything.
 * Asserted: each event GET /events lists arrives once per subscribed webhook, signed, with
 * `webhook-id` equal to its id and the body equal to the listed EventObject; the objects and
 * changes the spec names; the filtered webhook receives its two types and nothing else; a ping
 * (POST /webhooks/{id}/test) reaches both, whatever the filter.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKGROUND_TASKS } from "../src/background-tasks.ts";
import { WebhookWorker } from "../src/events/webhook-worker.ts";
import {
  adminPath,
  allEvents,
  type EventsProject,
  expectStatus,
  featureId,
  importEventsProject,
  publicPath,
  voterId,
} from "./support/events.fixture.ts";
import { type Answer, createTestContext, type Schemas, type TestContext } from "./support/harness.ts";

/**
 * An event as GET /events lists it (the document's union of event schemas), its object and
 * changes read as plain JSON (the union's objects share no field the test could index), its type
 * any string (the test checks that ping is never listed).
 */
type ListedEvent = Omit<Answer<"/api/v3/projects/{slug}/admin/events", "get">["data"][number], "type" | "data"> & {
  type: string;
  data: { object: Record<string, unknown>; changes: Record<string, { from: unknown; to: unknown }> | null };
};
type Delivery = Schemas["DeliveryObject"];
/** An answer kept to compare with an event's object: a feature, comment, release or voter. */
type Seen = Record<string, unknown> & { id: number | string };

import { type ReceivedRequest, startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver.ts";

/** Every type of the Events table but ping (which GET /events never lists). */
const TABLE_TYPES = [
  "feature.created",
  "feature.updated",
  "feature.status_changed",
  "feature.approved",
  "feature.merged",
  "feature.unmerged",
  "feature.deleted",
  "feature.vote_milestone",
  "vote.created",
  "vote.deleted",
  "comment.created",
  "comment.deleted",
  "release.published",
  "voter.banned",
  "voter.unbanned",
  "voter.deleted",
  "voter.billing_changed",
];
const FILTER = ["vote.created", "feature.deleted"];

let ctx: TestContext;
let receiver: WebhookReceiver;
let worker: WebhookWorker;
let project: EventsProject;
let all: Schemas["WebhookWithSecretObject"];
let filtered: Schemas["WebhookWithSecretObject"];
/** Every event of the project as GET /events lists it, once the scenario is over. */
let events: ListedEvent[];
/** What the routes answered during the scenario, to compare with the events' objects. */
const seen = {} as Record<
  | "approved"
  | "banned"
  | "deletedBefore"
  | "hotAt10"
  | "merged"
  | "overridden"
  | "ownerComment"
  | "ownerCreated"
  | "pendingBefore"
  | "releasedNow"
  | "scheduled"
  | "suggested"
  | "unbanned"
  | "unmerged"
  | "untiered"
  | "voterBefore"
  | "voterComment",
  Seen
>; // filled by beforeAll
/** The DeliveryObjects POST /webhooks/{id}/test answered. */
const pings: Partial<Record<"all" | "filtered", Delivery>> = {};

const as = (voter: string) => ({ "X-VF-Anon": project.tokens[voter]! });
const adminGet = async (path: string) => (await expectStatus(await ctx.get(adminPath(project, path), project.secretKey), 200)).data;
const adminSend = async (method: string, path: string, payload: unknown, status = 200) =>
  (await expectStatus(await ctx.send(method, adminPath(project, path), project.secretKey, payload), status)).data;
const publicSend = async (method: string, path: string, voter: string, payload: unknown, status: number) =>
  (await expectStatus(await ctx.send(method, publicPath(project, path), project.secretKey, payload, as(voter)), status)).data;
const vote = (feature: string, voter: string, method: "POST" | "DELETE" = "POST") =>
  publicSend(method, `/features/${featureId(project, feature)}/vote`, voter, undefined, 200);

async function until<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function deliveryLog(webhookId: number): Promise<Delivery[]> {
  return adminGet(`/webhooks/${webhookId}/deliveries?per_page=100`);
}

/** Requests of the receiver for the events of the feed (pings aside). */
const eventRequests = (path: string) => receiver.on(path).filter((request) => request.payload?.type !== "ping");
const ofType = (type: string) => events.filter((event) => event.type === type);

beforeAll(async () => {
  // On a shared Postgres (DATABASE_URL) this worker may claim deliveries of test files running
  // at the same time, and theirs ours: it runs with the short settings of
  // test/webhooks.delivery.test.ts so that whichever worker claims, an attempt behaves the same.
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
  // As src/server.ts and scripts/worker.ts run it: dispatch, delivery and the publication task.
  worker = new WebhookWorker({ db: ctx.db, config: ctx.deps.config, logger: ctx.deps.logger }, { tasks: BACKGROUND_TASKS });
  await worker.start();

  project = await importEventsProject(ctx);
  all = await adminSend("POST", "/webhooks", { url: `${receiver.url}/all`, description: "every type" }, 201);
  filtered = await adminSend("POST", "/webhooks", { url: `${receiver.url}/filtered`, events: FILTER }, 201);
  receiver.trust(all.secret);
  receiver.trust(filtered.secret);

  // A release scheduled shortly ahead: published later by the worker's task, with no request.
  seen.scheduled = await adminSend(
    "POST",
    "/releases",
    { name: "2.0", body: "Soon", published_at: new Date(Date.now() + 1500).toISOString() },
    201,
  );

  // feature.created: a voter's suggestion, then an owner's feature.
  seen.suggested = await publicSend("POST", "/features", "cy", { heading: "Idea", description: "Please" }, 201);
  seen.ownerCreated = await adminSend("POST", "/features", { heading: "Owner's", status: "planned" }, 201);
  // feature.updated + status_changed + approved.
  seen.pendingBefore = await adminGet(`/features/${featureId(project, "pending")}`);
  seen.approved = await adminSend("PATCH", `/features/${featureId(project, "pending")}`, { is_approved: true, status: "in_progress" });
  // vote.created x2, the second reaching 10 votes: feature.vote_milestone; then vote.created/deleted.
  await vote("hot", "v8");
  await vote("hot", "v9");
  seen.hotAt10 = await adminGet(`/features/${featureId(project, "hot")}`);
  await vote("plain", "ada");
  await vote("plain", "ada", "DELETE");
  // feature.merged / unmerged on the duplicate.
  await adminSend("POST", `/features/${featureId(project, "dup")}/merge`, { into_id: featureId(project, "hot") });
  seen.merged = await adminGet(`/features/${featureId(project, "dup")}`);
  seen.unmerged = await adminSend("POST", `/features/${featureId(project, "dup")}/unmerge`, undefined);
  // comment.created / deleted, by a voter's routes and the owner's.
  const plain = featureId(project, "plain");
  seen.voterComment = await publicSend("POST", `/features/${plain}/comments`, "cy", { content: "Hello" }, 201);
  seen.ownerComment = await adminSend(
    "POST",
    `/features/${plain}/comments`,
    { content: "Team answer", author_voter_id: voterId(project, "bob") },
    201,
  );
  await publicSend("DELETE", `/comments/${seen.voterComment.id}`, "cy", undefined, 200);
  await adminSend("DELETE", `/comments/${seen.ownerComment.id}`, undefined);
  // release.published at once.
  seen.releasedNow = await adminSend(
    "POST",
    "/releases",
    { name: "1.0", body: "Now", published_at: new Date(Date.now() - 1000).toISOString() },
    201,
  );
  // voter.banned / unbanned / billing_changed (override, then tier) / deleted.
  const ada = voterId(project, "ada");
  seen.banned = await adminSend("PATCH", `/voters/${ada}`, { banned: true });
  seen.unbanned = await adminSend("PATCH", `/voters/${ada}`, { banned: false });
  seen.overridden = await adminSend("PATCH", `/voters/${ada}`, { mrr_override_cents: 1200 });
  seen.untiered = await adminSend("PATCH", `/voters/${ada}`, { tier_id: null });
  seen.voterBefore = await adminGet(`/voters/${voterId(project, "v29")}`);
  await adminSend("DELETE", `/voters/${voterId(project, "v29")}`, undefined);
  // feature.deleted: the owner's feature, as it was.
  seen.deletedBefore = await adminGet(`/features/${seen.ownerCreated.id}`);
  await adminSend("DELETE", `/features/${seen.ownerCreated.id}`, undefined);

  // The scheduled release's time passes; the task (every 5 s) records its event.
  await until(
    async () => (await allEvents(ctx, project, 0, "type=release.published")).length >= 2,
    "the scheduled release published by the worker's task",
  );
  // ping: sent at once by the route, whatever the filter.
  pings.all = await adminSend("POST", `/webhooks/${all.id}/test`, undefined);
  pings.filtered = await adminSend("POST", `/webhooks/${filtered.id}/test`, undefined);

  events = await allEvents(ctx, project);
  const expectFiltered = events.filter((event) => FILTER.includes(event.type)).length;
  // Every delivery settled (recorded after the receiver answered), so every request is in.
  await until(async () => {
    const [toAll, toFiltered] = await Promise.all([deliveryLog(all.id), deliveryLog(filtered.id)]);
    const settled = (log: Delivery[]) => log.every((delivery) => delivery.status !== "pending");
    // At least: a webhook sent more than it should fails the tests below, naming what.
    return toAll.length >= events.length + 1 && toFiltered.length >= expectFiltered + 1 && settled(toAll) && settled(toFiltered);
  }, "every delivery made");
}, 45_000);

afterAll(async () => {
  await worker?.stop(0);
  await receiver?.close();
  await ctx?.close();
});

describe("events to webhooks, end to end", () => {
  it("makes every event type of the table through the routes, each listed by GET /events", () => {
    expect(new Set(events.map((event) => event.type))).toEqual(new Set(TABLE_TYPES));
    expect(events.map((event) => event.id)).toEqual([...new Set(events.map((event) => event.id))]);
  });

  it("delivers each event exactly once to the webhook for every type, signed, as GET /events lists it", async () => {
    const requests = eventRequests("/all");
    expect(requests).toHaveLength(events.length);
    const byId = new Map<string, ReceivedRequest>(requests.map((request) => [request.id, request]));
    expect(byId.size).toBe(events.length);
    for (const event of events) {
      const request = byId.get(event.id);
      expect(request, `${event.type} ${event.id} delivered`).toBeDefined();
      expect(request!.verified, `${event.type} signature`).toBe(true);
      expect(request!.verifiedBy).toEqual([all.secret]);
      expect(request!.payload.id).toBe(request!.id);
      expect(request!.payload).toEqual(event);
      expect(request!.headers["content-type"]).toBe("application/json");
    }
    const log = await deliveryLog(all.id);
    for (const delivery of log) {
      expect(delivery).toMatchObject({ status: "succeeded", attempts: 1, last_status_code: 204, last_error: null });
    }
    expect(new Set(log.filter((d) => d.event_type !== "ping").map((d) => d.event_id))).toEqual(new Set(events.map((e) => e.id)));
  });

  it("carries the objects and changes the spec names for each type", () => {
    const hot = featureId(project, "hot");
    const dup = featureId(project, "dup");
    const created = ofType("feature.created");
    expect(created.map((event) => event.data.object.id)).toEqual([seen.suggested.id, seen.ownerCreated.id]);
    expect(created[0]!.data.object).toMatchObject({ heading: "Idea", is_approved: false, author_voter_id: voterId(project, "cy") });
    expect(created[1]!.data).toEqual({ object: seen.ownerCreated, changes: null });

    const [updated] = ofType("feature.updated");
    expect(updated!.data.object).toEqual(seen.approved);
    expect(updated!.data.changes).toMatchObject({
      status: { from: "open", to: "in_progress" },
      is_approved: { from: false, to: true },
    });
    const statusChanged = ofType("feature.status_changed");
    expect(statusChanged[0]!.data).toEqual({ object: seen.approved, changes: { status: { from: "open", to: "in_progress" } } });
    // The merge archives the duplicate and the unmerge restores it: status_changed each time.
    expect(statusChanged.slice(1).map((event) => [event.data.object.id, event.data.changes])).toEqual([
      [dup, { status: { from: "planned", to: "archived" } }],
      [dup, { status: { from: "archived", to: "planned" } }],
    ]);
    expect(ofType("feature.approved").map((event) => event.data)).toEqual([
      { object: seen.approved, changes: { is_approved: { from: false, to: true } } },
    ]);

    const [merged] = ofType("feature.merged");
    expect(merged!.data.object).toEqual(seen.merged);
    expect(merged!.data.changes!.merged_into).toEqual({ from: null, to: hot });
    const [unmerged] = ofType("feature.unmerged");
    expect(unmerged!.data.object).toEqual(seen.unmerged);
    expect(unmerged!.data.changes!.merged_into).toEqual({ from: hot, to: null });
    expect(ofType("feature.deleted").map((event) => event.data)).toEqual([{ object: seen.deletedBefore, changes: null }]);

    // 8 imported votes + 2: 10 reached; the merge then carries hot from 10 to 26: 25 reached.
    const milestones = ofType("feature.vote_milestone");
    expect(milestones[0]!.data).toEqual({ object: seen.hotAt10, changes: { vote_count: { from: 9, to: 10 } } });
    expect(milestones.slice(1).map((event) => [event.data.object.id, event.data.changes])).toEqual([
      [hot, { vote_count: { from: 24, to: 25 } }],
    ]);

    const voteObject = (feature: string, voter: string, count: number) => ({
      object: { feature_id: featureId(project, feature), voter_id: voterId(project, voter), vote_count: count },
      changes: null,
    });
    expect(ofType("vote.created").map((event) => event.data)).toEqual([
      voteObject("hot", "v8", 9),
      voteObject("hot", "v9", 10),
      voteObject("plain", "ada", 1),
    ]);
    expect(ofType("vote.deleted").map((event) => event.data)).toEqual([voteObject("plain", "ada", 0)]);

    const commentsCreated = ofType("comment.created");
    expect(commentsCreated.map((event) => event.data.object.id)).toEqual([seen.voterComment.id, seen.ownerComment.id]);
    expect(commentsCreated[0]!.data.object).toMatchObject({ content: "Hello", author_role: null });
    expect(commentsCreated[1]!.data).toEqual({ object: seen.ownerComment, changes: null });
    expect(seen.ownerComment.author_role).toBe("editor");
    expect(ofType("comment.deleted").map((event) => [event.data.object.id, event.data.changes])).toEqual([
      [seen.voterComment.id, null],
      [seen.ownerComment.id, null],
    ]);

    // At once first (recorded by the POST), then the scheduled one when its time came.
    expect(ofType("release.published").map((event) => event.data)).toEqual([
      { object: seen.releasedNow, changes: null },
      { object: { ...seen.scheduled, status: "published" }, changes: null },
    ]);
    expect(seen.scheduled.status).toBe("scheduled");

    expect(ofType("voter.banned").map((event) => event.data)).toEqual([
      { object: seen.banned, changes: { banned: { from: false, to: true } } },
    ]);
    expect(ofType("voter.unbanned").map((event) => event.data)).toEqual([
      { object: seen.unbanned, changes: { banned: { from: true, to: false } } },
    ]);
    const billing = ofType("voter.billing_changed");
    expect(billing.map((event) => event.data.object)).toEqual([seen.overridden, seen.untiered]);
    expect(billing[0]!.data.changes).toMatchObject({ mrr_override_cents: { from: null, to: 1200 } });
    expect(billing[1]!.data.changes).toMatchObject({ tier: { from: project.ids.ids.tiers.pro, to: null } });
    // As it was, with the personal fields null (Rules 3); voter_id kept.
    const scrubbed = Object.fromEntries(
      ["display_name", "email", "company", "sso_id", "customer_id", "stripe_customer_id", "paddle_customer_id", "subscription_id"].map(
        (field) => [field, null],
      ),
    );
    expect(ofType("voter.deleted").map((event) => event.data)).toEqual([{ object: { ...seen.voterBefore, ...scrubbed }, changes: null }]);
    expect(ofType("voter.deleted")[0]!.data.object.voter_id).toBe(voterId(project, "v29"));
  });

  it("honours a webhook's events filter: only vote.created and feature.deleted, each once", async () => {
    const expected = events.filter((event) => FILTER.includes(event.type));
    expect(expected.map((event) => event.type).sort()).toEqual(["feature.deleted", "vote.created", "vote.created", "vote.created"]);
    const requests = eventRequests("/filtered");
    expect(requests.map((request) => request.id).sort()).toEqual(expected.map((event) => event.id).sort());
    for (const request of requests) {
      expect(request.verifiedBy).toEqual([filtered.secret]);
      expect(request.payload).toEqual(expected.find((event) => event.id === request.id));
    }
    const log = await deliveryLog(filtered.id);
    expect(log.map((delivery) => delivery.event_type).sort()).toEqual([...FILTER, "vote.created", "vote.created", "ping"].sort());
    expect(log.every((delivery) => delivery.status === "succeeded" && delivery.attempts === 1)).toBe(true);
  });

  it("sends a ping to each webhook on POST /test, signed, whatever its filter, and lists it in no feed", () => {
    for (const [name, webhook] of [
      ["all", all],
      ["filtered", filtered],
    ] as const) {
      const delivery = pings[name];
      expect(delivery).toMatchObject({
        webhook_id: webhook.id,
        event_type: "ping",
        status: "succeeded",
        attempts: 1,
        last_status_code: 204,
      });
      const received = receiver.on(`/${name}`).filter((request) => request.payload?.type === "ping");
      expect(received).toHaveLength(1);
      const [ping] = received;
      expect(ping!.verifiedBy).toEqual([webhook.secret]);
      expect(ping!.id).toBe(delivery!.event_id);
      expect(ping!.id).toMatch(/^evt_[0-9a-hjkmnp-tv-z]{26}$/);
      expect(ping!.payload).toEqual({
        id: ping!.id,
        type: "ping",
        created_at: expect.any(String),
        project: project.slug,
        data: { object: expect.objectContaining({ id: webhook.id, url: webhook.url, events: webhook.events }), changes: null },
      });
      expect(ping!.payload.data.object.secret).toBeUndefined();
    }
    expect(events.some((event) => event.type === "ping")).toBe(false);
  });
});
