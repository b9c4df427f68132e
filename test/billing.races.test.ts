/**
 * Idempotent and out-of-order safe (owner-api-v3.md, "Billing sync"): the same event twice
 * changes nothing the second time; an event older than the last one applied to its subscription
 * changes nothing; and 200 concurrent deliveries of a burst of events for one customer (each
 * event delivered many times, in random order, as Stripe's retries do) end exactly where applying
 * each distinct event once, in time order, ends (compared with a second project fed in order).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BillingProject,
  billingChangedEvents,
  billingState,
  expectReceived,
  importBillingProject,
  type PaddleSubscriptionFields,
  paddleEvent,
  paddleSubscription,
  revenueFeatures,
  revenueVoter,
  type StripeSubscriptionFields,
  sendPaddle,
  sendStripe,
  stripeEvent,
  stripeSubscription,
  unix,
  vendorId,
} from "./support/billing.fixture.ts";
import { createTestContext, type TestContext } from "./support/harness.ts";
import { counterProblems } from "./support/owner-accounts.fixture.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

/** Deterministic shuffle (mulberry32), so a failure can be replayed. */
function shuffled<T>(items: T[], seed: number): T[] {
  let state = seed;
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** What the revenue routes show of the customer's voter and the features, ids replaced by names. */
async function revenueView(billing: BillingProject, customerId: string) {
  const { voter_id: _id, tier, votes, ...voter } = await revenueVoter(ctx, billing, customerId);
  const features = [...(await revenueFeatures(ctx, billing)).values()]
    .map(({ id: _featureId, ...feature }) => feature)
    .sort((a, b) => a.heading.localeCompare(b.heading));
  return {
    voter: { ...voter, tier: tier?.name ?? null, votes: votes.map(({ feature_id: _f, ...vote }) => vote) },
    features,
  };
}

describe("idempotency", () => {
  it("the same event twice (and 20 concurrent copies of another): applied once, 200 each time, one voter.billing_changed", async () => {
    const billing = await importBillingProject(ctx);
    const event = stripeEvent(
      "customer.subscription.created",
      stripeSubscription({ id: vendorId("sub"), customer: "cus_eve", status: "active", price: "price_team_m" }),
      unix("2026-11-01T00:00:00Z"),
    );
    await expectReceived(sendStripe(ctx, billing, event));
    const after = await billingState(ctx.db, billing.projectId);
    await expectReceived(sendStripe(ctx, billing, event));
    expect(await billingState(ctx.db, billing.projectId)).toEqual(after);

    const paddle = paddleEvent(
      "subscription.activated",
      paddleSubscription({ id: vendorId("sub"), customer_id: "ctm_bob", status: "active", price: "pri_team" }),
      "2026-11-02T00:00:00Z",
    );
    const answers = await Promise.all(Array.from({ length: 20 }, () => sendPaddle(ctx, billing, paddle)));
    for (const answer of answers) await expectReceived(answer);
    const events = await billingChangedEvents(ctx.db, billing.projectId);
    expect(events.map((e) => e.object.voter_id)).toEqual([billing.ids.voters.eve, billing.ids.voters.bob]);
    const settled = await billingState(ctx.db, billing.projectId);
    await expectReceived(sendPaddle(ctx, billing, paddle));
    expect(await billingState(ctx.db, billing.projectId)).toEqual(settled);
  });
});

describe("out of order", () => {
  it("an older event after a newer one of the same subscription: 200, nothing changed (both systems)", async () => {
    const billing = await importBillingProject(ctx);
    const id = vendorId("sub");
    const subscription = (status: string, price: string) => stripeSubscription({ id, customer: "cus_ada", status, price });
    await expectReceived(
      sendStripe(ctx, billing, stripeEvent("customer.subscription.updated", subscription("past_due", "price_team_m"), 2_000_000_000)),
    );
    const newer = await billingState(ctx.db, billing.projectId);
    await expectReceived(
      sendStripe(ctx, billing, stripeEvent("customer.subscription.updated", subscription("active", "price_pro_m"), 1_999_999_999)),
    );
    await expectReceived(
      sendStripe(ctx, billing, stripeEvent("invoice.paid", { customer: "cus_ada", subscription: id, lines: { data: [] } }, 1_999_999_000)),
    );
    const after = await billingState(ctx.db, billing.projectId);
    expect(after.voters).toEqual(newer.voters);
    expect(after.aggregates).toEqual(newer.aggregates);
    expect(after.events).toEqual(newer.events);
    expect((await revenueVoter(ctx, billing, "cus_ada")).subscription_status).toBe("past_due");

    const paddleId = vendorId("sub");
    const paddle = (status: string) => paddleSubscription({ id: paddleId, customer_id: "ctm_bob", status, price: "pri_biz" });
    await expectReceived(sendPaddle(ctx, billing, paddleEvent("subscription.canceled", paddle("canceled"), "2026-11-05T00:00:00.000002Z")));
    const canceled = await billingState(ctx.db, billing.projectId);
    await expectReceived(sendPaddle(ctx, billing, paddleEvent("subscription.activated", paddle("active"), "2026-11-05T00:00:00.000001Z")));
    const late = await billingState(ctx.db, billing.projectId);
    expect(late.voters).toEqual(canceled.voters);
    expect(late.events).toEqual(canceled.events);
    expect((await revenueVoter(ctx, billing, "ctm_bob")).churned).toBe(true);
  });

  it("an older event of another subscription of the same customer does not overwrite a newer one", async () => {
    const billing = await importBillingProject(ctx);
    const newer = stripeSubscription({ id: vendorId("sub"), customer: "cus_ada", status: "active", price: "price_team_m" });
    const older = stripeSubscription({ id: vendorId("sub"), customer: "cus_ada", status: "canceled", price: "price_pro_m" });
    await expectReceived(sendStripe(ctx, billing, stripeEvent("customer.subscription.created", newer, unix("2026-11-03T00:00:00Z"))));
    const before = await billingState(ctx.db, billing.projectId);
    await expectReceived(sendStripe(ctx, billing, stripeEvent("customer.subscription.deleted", older, unix("2026-11-02T00:00:00Z"))));
    const after = await billingState(ctx.db, billing.projectId);
    expect(after.voters).toEqual(before.voters);
    expect(after.events).toEqual(before.events);
  });
});

/** A burst of distinct events for one customer, oldest first (the last one a full subscription state). */
function stripeBurst(customer: string): ReturnType<typeof stripeEvent>[] {
  const first = vendorId("sub");
  const second = vendorId("sub");
  const t0 = unix("2026-11-01T00:00:00Z");
  const sub = (id: string, status: string, price: string, extra: Partial<StripeSubscriptionFields> = {}) =>
    stripeSubscription({ id, customer, status, price, start_date: t0, ...extra });
  const invoice = (id: string, price: string) => ({
    id: vendorId("in"),
    object: "invoice",
    customer,
    subscription: id,
    lines: { data: [{ price: { id: price } }] },
  });
  const trial = { trial_end: t0 + 14 * 86_400 };
  return [
    stripeEvent("customer.subscription.created", sub(first, "trialing", "price_pro_m", trial), t0),
    stripeEvent("customer.subscription.trial_will_end", sub(first, "trialing", "price_pro_m", trial), t0 + 100),
    stripeEvent("invoice.paid", invoice(first, "price_team_m"), t0 + 200),
    stripeEvent("customer.subscription.updated", sub(first, "active", "price_team_m", trial), t0 + 300),
    stripeEvent("invoice.payment_failed", invoice(first, "price_team_m"), t0 + 400),
    stripeEvent("customer.subscription.updated", sub(first, "past_due", "price_team_m", trial), t0 + 500),
    stripeEvent("customer.subscription.updated", sub(first, "active", "price_pro_m", trial), t0 + 600),
    stripeEvent(
      "customer.subscription.deleted",
      sub(first, "canceled", "price_pro_m", { ...trial, canceled_at: t0 + 650, ended_at: t0 + 700 }),
      t0 + 700,
    ),
    stripeEvent("customer.subscription.created", sub(second, "incomplete", "price_team_m"), t0 + 800),
    stripeEvent("invoice.paid", invoice(second, "price_team_m"), t0 + 850),
    stripeEvent("customer.subscription.updated", sub(second, "active", "price_team_m"), t0 + 900),
  ];
}

describe("bursts", () => {
  it("Stripe: 200 concurrent deliveries of 11 events for one customer end as the 11 applied once in time order", async () => {
    const inOrder = await importBillingProject(ctx);
    const burst = await importBillingProject(ctx);
    const events = stripeBurst("cus_ada");
    for (const event of events) await expectReceived(sendStripe(ctx, inOrder, event));

    const deliveries = shuffled(
      Array.from({ length: 200 }, (_, i) => events[i % events.length]),
      14,
    );
    const answers = await Promise.all(deliveries.map((event) => sendStripe(ctx, burst, event)));
    for (const answer of answers) await expectReceived(answer);

    const expected = await revenueView(inOrder, "cus_ada");
    expect(expected.voter).toMatchObject({ subscription_status: "active", churned: false, tier: "Team" });
    expect(await revenueView(burst, "cus_ada")).toEqual(expected);
    for (const project of [inOrder, burst]) expect(await counterProblems(ctx.db, project.project.slug)).toEqual([]);

    // Each distinct event processed once; at most one voter.billing_changed per event, the last
    // one showing the voter as it ended.
    const processed = (await billingState(ctx.db, burst.projectId)).processed;
    expect(processed).toHaveLength(events.length);
    const changed = await billingChangedEvents(ctx.db, burst.projectId);
    expect(changed.length).toBeGreaterThanOrEqual(1);
    expect(changed.length).toBeLessThanOrEqual(events.length);
    const { votes: _votes, ...revenueNow } = await revenueVoter(ctx, burst, "cus_ada");
    expect(changed.at(-1).object).toMatchObject(revenueNow);
  });

  it("Paddle: 120 concurrent deliveries of 6 events for one customer end as the 6 applied once in time order", async () => {
    const inOrder = await importBillingProject(ctx);
    const burst = await importBillingProject(ctx);
    const id = vendorId("sub");
    const period = { starts_at: "2026-11-01T00:00:00Z", ends_at: "2026-11-15T00:00:00Z" };
    const sub = (status: string, price: string, extra: Partial<PaddleSubscriptionFields> = {}) =>
      paddleSubscription({ id, customer_id: "ctm_bob", status, price, current_billing_period: period, trial_dates: period, ...extra });
    const events = [
      paddleEvent("subscription.created", sub("trialing", "pri_biz"), "2026-11-01T00:00:00.000001Z"),
      paddleEvent("subscription.trialing", sub("trialing", "pri_team"), "2026-11-01T00:00:00.000002Z"),
      paddleEvent("subscription.activated", sub("active", "pri_team"), "2026-11-15T00:00:00Z"),
      paddleEvent(
        "transaction.completed",
        { id: vendorId("txn"), customer_id: "ctm_bob", subscription_id: id, items: [{ price: { id: "pri_biz" } }] },
        "2026-11-15T00:00:01Z",
      ),
      paddleEvent("subscription.past_due", sub("past_due", "pri_biz"), "2026-12-15T00:00:00Z"),
      paddleEvent("subscription.canceled", sub("canceled", "pri_biz", { canceled_at: "2026-12-20T00:00:00Z" }), "2026-12-20T00:00:01Z"),
    ];
    for (const event of events) await expectReceived(sendPaddle(ctx, inOrder, event));
    const deliveries = shuffled(
      Array.from({ length: 120 }, (_, i) => events[i % events.length]),
      7,
    );
    const answers = await Promise.all(deliveries.map((event) => sendPaddle(ctx, burst, event)));
    for (const answer of answers) await expectReceived(answer);

    const expected = await revenueView(inOrder, "ctm_bob");
    expect(expected.voter).toMatchObject({
      churned: true,
      churn_source: "paddle",
      trial_ends_at: "2026-11-15T00:00:00.000Z",
      tier: "Business",
    });
    expect(await revenueView(burst, "ctm_bob")).toEqual(expected);
    expect(await counterProblems(ctx.db, burst.project.slug)).toEqual([]);
  });
});
