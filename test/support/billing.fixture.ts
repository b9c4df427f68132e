/**
 * Fixture of the billing sync tests (owner-api-v3.md, "Billing sync"): the owner accounts project
 * (test/support/owner-accounts.fixture.ts) plus a tier and a voter, with webhook secrets stored through
 * PATCH /admin/settings, and events built and signed as the vendors do: Stripe with the stripe
 * library's own webhooks.generateTestHeaderString, Paddle with `ts=...;h1=HMAC-SHA256(secret,
 * ts + ":" + body)` as Paddle's documentation gives it.
 *
 * Tiers: pro (4900 cents, x3, stripe price_pro_m), biz (19900, x5, paddle pri_biz), team (9900,
 * x2, stripe price_team_m, paddle pri_team). Voters: ada (pro, stripe cus_ada; votes f1 f2), bob
 * (biz, paddle ctm_bob; votes f1 f3), cyd (banned), dee (churned by stripe), eve (no tier, stripe
 * cus_eve and paddle ctm_eve; votes f1 f3).
 */
import { createHmac, randomBytes } from "node:crypto";
import { sql } from "kysely";
import Stripe from "stripe";
import { expect } from "vitest";
import type { Db } from "../../db/connect.ts";
// Json stays on the two readers billing.stripe and billing.paddle index without checks.
import type { ImportedProject, Json, Schemas, TestContext } from "./harness.ts";
import { accountsSnapshot, expectStatus } from "./owner-accounts.fixture.ts";

export interface BillingProject {
  project: ImportedProject;
  /** The id map's inner maps (read loosely until every billing test reads ids typed). */
  ids: ImportedProject["ids"]["ids"];
  projectId: number;
  stripeSecret: string;
  paddleSecret: string;
  /** Eve's anonymous token (X-VF-Anon). */
  eveToken: string;
}

/** Imports a fresh billing project and stores its two webhook secrets through the owner API. */
export async function importBillingProject(ctx: TestContext): Promise<BillingProject> {
  const { overrides } = accountsSnapshot();
  // Tokens are unique across projects: a fresh one per import.
  const eveToken = `anon_${randomBytes(18).toString("base64url")}`;
  overrides.tiers.push({
    ref: "team",
    name: "Team",
    mrr_cents: 9900,
    multiplier: 2,
    stripe_price_ids: ["price_team_m"],
    paddle_price_ids: ["pri_team"],
  });
  overrides.voters.push({
    ref: "eve",
    kind: "anonymous",
    anon_token: eveToken,
    display_name: "Eve",
    stripe_customer_id: "cus_eve",
    paddle_customer_id: "ctm_eve",
  });
  overrides.votes.push(
    { voter: "eve", feature: "f1", created_at: "2026-10-07T00:00:00Z" },
    { voter: "eve", feature: "f3", created_at: "2026-10-08T00:00:00Z" },
  );
  const project = await ctx.importProject(overrides);
  const stripeSecret = `whsec_${randomBytes(24).toString("base64")}`;
  const paddleSecret = `pdl_ntfset_${randomBytes(16).toString("hex")}`;
  await expectStatus(
    await ctx.send("PATCH", `/api/v3/projects/${project.slug}/admin/settings`, project.secretKey, {
      stripe_webhook_secret: stripeSecret,
      paddle_webhook_secret: paddleSecret,
    }),
    200,
  );
  const row = await ctx.db.selectFrom("projects").select("id").where("slug", "=", project.slug).executeTakeFirstOrThrow();
  return { project, ids: project.ids.ids, projectId: row.id, stripeSecret, paddleSecret, eveToken };
}

/** Unix seconds of an RFC 3339 time. */
export const unix = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** A unique vendor-looking id. */
export const vendorId = (prefix: string) => `${prefix}_${randomBytes(8).toString("hex")}`;

export interface StripeSubscriptionFields {
  id: string;
  customer: string;
  status: string;
  price: string;
  start_date?: number;
  trial_end?: number | null;
  canceled_at?: number | null;
  ended_at?: number | null;
}

/** A Stripe subscription object as webhooks carry it (fields the sync reads, and some it ignores). */
export function stripeSubscription(fields: StripeSubscriptionFields) {
  return {
    id: fields.id,
    object: "subscription",
    customer: fields.customer,
    status: fields.status,
    start_date: fields.start_date ?? unix("2026-10-01T00:00:00Z"),
    trial_end: fields.trial_end ?? null,
    canceled_at: fields.canceled_at ?? null,
    ended_at: fields.ended_at ?? null,
    cancel_at_period_end: false,
    currency: "eur",
    livemode: false,
    metadata: {},
    items: {
      object: "list",
      data: [
        { id: vendorId("si"), object: "subscription_item", price: { id: fields.price, object: "price", unit_amount: 4900 }, quantity: 1 },
      ],
      has_more: false,
    },
  };
}

/** A Stripe event envelope around `object`. */
export function stripeEvent(type: string, object: unknown, created: number, id = vendorId("evt")) {
  return {
    id,
    object: "event",
    api_version: "2025-03-31.basil",
    created,
    type,
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
  };
}

/** Stripe-Signature for `payload`, made by the stripe library's own test helper. */
export function signStripe(payload: string, secret: string, timestamp?: number): string {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret, ...(timestamp === undefined ? {} : { timestamp }) });
}

/** A Paddle event envelope. */
export function paddleEvent(eventType: string, data: unknown, occurredAt: string, eventId = vendorId("evt")) {
  return { event_id: eventId, event_type: eventType, occurred_at: occurredAt, notification_id: vendorId("ntf"), data };
}

export interface PaddleSubscriptionFields {
  id: string;
  customer_id: string;
  status: string;
  price: string;
  started_at?: string | null;
  canceled_at?: string | null;
  current_billing_period?: { starts_at: string; ends_at: string } | null;
  /** The item's trial, if it had one. */
  trial_dates?: { starts_at: string; ends_at: string } | null;
}

/** A Paddle subscription notification object. */
export function paddleSubscription(fields: PaddleSubscriptionFields) {
  return {
    id: fields.id,
    status: fields.status,
    customer_id: fields.customer_id,
    address_id: vendorId("add"),
    currency_code: "EUR",
    created_at: "2026-10-01T00:00:00.000000Z",
    updated_at: "2026-10-01T00:00:00.000000Z",
    started_at: fields.started_at === undefined ? "2026-10-01T00:00:00.000000Z" : fields.started_at,
    canceled_at: fields.canceled_at ?? null,
    collection_mode: "automatic",
    current_billing_period: fields.current_billing_period === undefined ? null : fields.current_billing_period,
    billing_cycle: { interval: "month", frequency: 1 },
    scheduled_change: null,
    items: [
      {
        status: "active",
        quantity: 1,
        recurring: true,
        trial_dates: fields.trial_dates ?? null,
        price: { id: fields.price, product_id: vendorId("pro") },
      },
    ],
  };
}

/** Paddle-Signature for `body` as Paddle's documentation gives it: ts=...;h1=hex HMAC-SHA256(secret, ts:body). */
export function signPaddle(body: string, secret: string, ts = Math.floor(Date.now() / 1000)): string {
  return `ts=${ts};h1=${createHmac("sha256", secret).update(`${ts}:${body}`).digest("hex")}`;
}

/** POSTs a raw Stripe body with its signature header (omitted when `signature` is null). */
export async function postStripe(ctx: TestContext, slug: string, body: string, signature: string | null): Promise<Response> {
  return ctx.app.request(`/api/v3/billing/stripe/${slug}`, {
    method: "POST",
    headers: { "Content-Type": "application/json; charset=utf-8", ...(signature === null ? {} : { "Stripe-Signature": signature }) },
    body,
  });
}

/** POSTs a raw Paddle body with its signature header (omitted when `signature` is null). */
export async function postPaddle(ctx: TestContext, slug: string, body: string, signature: string | null): Promise<Response> {
  return ctx.app.request(`/api/v3/billing/paddle/${slug}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(signature === null ? {} : { "Paddle-Signature": signature }) },
    body,
  });
}

/** Sends `event` to the project's Stripe route, signed with its secret; returns the response. */
export function sendStripe(ctx: TestContext, billing: BillingProject, event: unknown): Promise<Response> {
  const body = JSON.stringify(event);
  return postStripe(ctx, billing.project.slug, body, signStripe(body, billing.stripeSecret));
}

/** Sends `event` to the project's Paddle route, signed with its secret; returns the response. */
export function sendPaddle(ctx: TestContext, billing: BillingProject, event: unknown): Promise<Response> {
  const body = JSON.stringify(event);
  return postPaddle(ctx, billing.project.slug, body, signPaddle(body, billing.paddleSecret));
}

/** Asserts the 200 `{received: true}` envelope. */
export async function expectReceived(response: Response | Promise<Response>): Promise<void> {
  expect(await expectStatus(await response, 200)).toEqual({ data: { received: true }, meta: null, error: null });
}

/** The RevenueVoterObject of the voter carrying `customerId` (public revenue route, secret key). */
export async function revenueVoter(ctx: TestContext, billing: BillingProject, customerId: string): Promise<Schemas["RevenueVoterObject"]> {
  const envelope = await expectStatus(
    await ctx.get(`/api/v3/projects/${billing.project.slug}/voters?customer_id=${customerId}`, billing.project.secretKey),
    200,
  );
  expect(envelope.data).toHaveLength(1);
  return envelope.data[0];
}

/** The AdminVoterObject of voter `voterId` (owner route). */
export async function adminVoter(ctx: TestContext, billing: BillingProject, voterId: string): Promise<Schemas["AdminVoterObject"]> {
  return (
    await expectStatus(await ctx.get(`/api/v3/projects/${billing.project.slug}/admin/voters/${voterId}`, billing.project.secretKey), 200)
  ).data;
}

/** RevenueFeatureObject of each feature, by id. */
export async function revenueFeatures(ctx: TestContext, billing: BillingProject): Promise<Map<number, Json>> {
  const envelope = await expectStatus(
    await ctx.get(`/api/v3/projects/${billing.project.slug}/revenue/features?sort=votes&per_page=100`, billing.project.secretKey),
    200,
  );
  return new Map(envelope.data.map((feature: Json) => [feature.id, feature]));
}

/** The project's voter.billing_changed events (data: {object, changes}) in insertion order. */
export async function billingChangedEvents(db: Db, projectId: number): Promise<Json[]> {
  const { rows } = await sql<{ data: Json }>`SELECT data FROM events
    WHERE project_id = ${projectId} AND type = 'voter.billing_changed' ORDER BY seq`.execute(db);
  return rows.map((row) => (typeof row.data === "string" ? JSON.parse(row.data) : row.data));
}

/**
 * Everything the billing sync may change in the project, for "nothing changed" checks: every
 * voter's AdminVoterObject fields (as rows), the revenue aggregates, the events and the sync's
 * own tables.
 */
export async function billingState(db: Db, projectId: number) {
  const voters = await db.selectFrom("voters").selectAll().where("project_id", "=", projectId).orderBy("id").execute();
  const aggregates = await db
    .selectFrom("feature_tier_votes")
    .selectAll()
    .where("project_id", "=", projectId)
    .orderBy("feature_id")
    .orderBy("tier_id")
    .execute();
  const events = await db.selectFrom("events").select(["seq", "type"]).where("project_id", "=", projectId).orderBy("seq").execute();
  const processed = await db
    .selectFrom("billing_events")
    .select(["system", "event_id"])
    .where("project_id", "=", projectId)
    .orderBy("event_id")
    .execute();
  const subscriptions = await db.selectFrom("billing_subscriptions").selectAll().where("project_id", "=", projectId).execute();
  return { voters, aggregates, events, processed, subscriptions };
}
