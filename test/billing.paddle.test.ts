/**
 * Paddle billing sync (owner-api-v3.md, "Billing sync", Paddle row): every handled event type,
 * signed as Paddle's documentation gives it (verified by @paddle/paddle-node-sdk), and every
 * field the table names through the revenue and owner routes: the status as sent, started_at,
 * canceled_at, trial_ends_at from the current billing period while trialing, the tier from the
 * first item's price, churn with source "paddle".
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  adminVoter,
  billingChangedEvents,
  expectReceived,
  importBillingProject,
  paddleEvent,
  paddleSubscription,
  revenueFeatures,
  revenueVoter,
  sendPaddle,
  vendorId,
} from "./support/billing.fixture.ts";
import { createTestContext, type TestContext } from "./support/harness.ts";
import { counterProblems } from "./support/owner-accounts.fixture.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const period = { starts_at: "2026-11-01T00:00:00.000000Z", ends_at: "2026-11-15T00:00:00.000000Z" };

describe("subscription.* events", () => {
  it("created while trialing: every field, trial_ends_at = the current period's end, tier of the price, matched_on paddle", async () => {
    const billing = await importBillingProject(ctx);
    const { ids } = billing;
    const id = vendorId("sub");
    const data = paddleSubscription({
      id,
      customer_id: "ctm_bob",
      status: "trialing",
      price: "pri_team",
      started_at: "2026-11-01T00:00:00.123456Z",
      current_billing_period: period,
    });
    await expectReceived(sendPaddle(ctx, billing, paddleEvent("subscription.created", data, "2026-11-01T00:00:01.500000Z")));
    const expected = {
      voter_id: ids.voters.bob,
      customer_id: "ctm_bob",
      matched_on: "paddle",
      subscription_id: id,
      subscription_status: "trialing",
      subscribed_at: "2026-11-01T00:00:00.123Z",
      trial_ends_at: "2026-11-15T00:00:00.000Z",
      canceled_at: null,
      churned: false,
      churned_at: null,
      churn_source: null,
      last_synced_at: "2026-11-01T00:00:01.500Z",
      mrr_cents: 9900,
      mrr_source: "tier",
      tier: { id: ids.tiers.team, name: "Team", mrr_cents: 9900, multiplier: 2 },
    };
    expect(await revenueVoter(ctx, billing, "ctm_bob")).toMatchObject(expected);
    expect(await adminVoter(ctx, billing, ids.voters.bob)).toMatchObject({ ...expected, paddle_customer_id: "ctm_bob" });
    const events = await billingChangedEvents(ctx.db, billing.projectId);
    expect(events).toHaveLength(1);
    expect(events[0].changes.tier).toEqual({ from: ids.tiers.biz, to: ids.tiers.team });
    expect(events[0].changes.mrr_cents).toEqual({ from: 19900, to: 9900 });
    expect(await counterProblems(ctx.db, billing.project.slug)).toEqual([]);
  });

  it("activated, updated, past_due, paused, resumed, trialing: the status as sent; after the trial, its end from the item's trial dates", async () => {
    const billing = await importBillingProject(ctx);
    const id = vendorId("sub");
    const steps: [string, string][] = [
      ["subscription.trialing", "trialing"],
      ["subscription.activated", "active"],
      ["subscription.updated", "active"],
      ["subscription.past_due", "past_due"],
      ["subscription.paused", "paused"],
      ["subscription.resumed", "active"],
    ];
    let minute = 0;
    for (const [type, status] of steps) {
      minute++;
      const occurredAt = `2026-11-02T00:${String(minute).padStart(2, "0")}:00.000000Z`;
      const data = paddleSubscription({
        id,
        customer_id: "ctm_eve",
        status,
        price: "pri_team",
        current_billing_period: period,
        trial_dates: period,
      });
      await expectReceived(sendPaddle(ctx, billing, paddleEvent(type, data, occurredAt)));
      expect(await revenueVoter(ctx, billing, "ctm_eve"), type).toMatchObject({
        subscription_id: id,
        subscription_status: status,
        trial_ends_at: "2026-11-15T00:00:00.000Z",
        churned: false,
        last_synced_at: new Date(occurredAt).toISOString(),
        tier: { id: billing.ids.tiers.team },
      });
    }
    // A subscription whose item had no trial: no trial end.
    const other = paddleSubscription({ id: vendorId("sub"), customer_id: "ctm_eve", status: "active", price: "pri_team" });
    await expectReceived(sendPaddle(ctx, billing, paddleEvent("subscription.created", other, "2026-11-03T00:00:00.000000Z")));
    expect(await revenueVoter(ctx, billing, "ctm_eve")).toMatchObject({ subscription_id: other.id, trial_ends_at: null });
  });

  it("canceled: churned, churned_at = canceled_at, churn_source paddle; the revenue routes count it", async () => {
    const billing = await importBillingProject(ctx);
    const { ids } = billing;
    const before = await revenueFeatures(ctx, billing);
    const data = paddleSubscription({
      id: vendorId("sub"),
      customer_id: "ctm_bob",
      status: "canceled",
      price: "pri_biz",
      canceled_at: "2026-11-20T10:00:00.000000Z",
    });
    await expectReceived(sendPaddle(ctx, billing, paddleEvent("subscription.canceled", data, "2026-11-20T10:00:02.000000Z")));
    const expected = {
      subscription_status: "canceled",
      canceled_at: "2026-11-20T10:00:00.000Z",
      churned: true,
      churned_at: "2026-11-20T10:00:00.000Z",
      churn_source: "paddle",
      tier: { id: ids.tiers.biz },
    };
    expect(await revenueVoter(ctx, billing, "ctm_bob")).toMatchObject(expected);
    expect(await adminVoter(ctx, billing, ids.voters.bob)).toMatchObject(expected);
    const after = await revenueFeatures(ctx, billing);
    for (const feature of [ids.features.f1, ids.features.f3]) {
      expect(after.get(feature).churned_voters).toBe(before.get(feature).churned_voters + 1);
      expect(after.get(feature).mrr_cents).toBe(before.get(feature).mrr_cents - 19900);
    }
    expect(await counterProblems(ctx.db, billing.project.slug)).toEqual([]);
  });
});

describe("transaction.completed", () => {
  it("sets subscription_id, the tier of the first item's price and last_synced_at; the transaction's status is not the subscription's", async () => {
    const billing = await importBillingProject(ctx);
    const { ids } = billing;
    const id = vendorId("sub");
    const subscription = paddleSubscription({ id, customer_id: "ctm_bob", status: "active", price: "pri_biz" });
    await expectReceived(sendPaddle(ctx, billing, paddleEvent("subscription.activated", subscription, "2026-11-01T00:00:00.000000Z")));
    const transaction = {
      id: vendorId("txn"),
      status: "completed",
      customer_id: "ctm_bob",
      subscription_id: id,
      origin: "subscription_recurring",
      currency_code: "EUR",
      items: [{ price_id: "pri_team", price: { id: "pri_team" }, quantity: 1 }],
      payments: [],
    };
    await expectReceived(sendPaddle(ctx, billing, paddleEvent("transaction.completed", transaction, "2026-11-02T00:00:00.000000Z")));
    expect(await revenueVoter(ctx, billing, "ctm_bob")).toMatchObject({
      subscription_id: id,
      subscription_status: "active",
      tier: { id: ids.tiers.team },
      last_synced_at: "2026-11-02T00:00:00.000Z",
    });
    expect(await counterProblems(ctx.db, billing.project.slug)).toEqual([]);
  });
});
