/**
 * Stripe billing sync (owner-api-v3.md, "Billing sync", Stripe row): every handled event type,
 * signed with the stripe library's own test helper, and every field the table names as the
 * public revenue routes and the owner's voter route show it; churn and its source; the tier from
 * the price; one voter.billing_changed per change; counters exact.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  adminVoter,
  billingChangedEvents,
  billingState,
  expectReceived,
  importBillingProject,
  revenueFeatures,
  revenueVoter,
  sendStripe,
  stripeEvent,
  stripeSubscription,
  unix,
  vendorId,
} from "./support/billing.fixture.ts";
import { createTestContext, type Schemas, type TestContext } from "./support/harness.ts";
import { counterProblems, expectStatus } from "./support/owner-accounts.fixture.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

describe("customer.subscription.* events", () => {
  it("created: sets every subscription field, the tier of the price and last_synced_at; revenue follows; one event", async () => {
    const billing = await importBillingProject(ctx);
    const { ids } = billing;
    const before = await revenueFeatures(ctx, billing);
    const subscriptionId = vendorId("sub");
    const created = unix("2026-11-01T10:00:00Z");
    const subscription = stripeSubscription({
      id: subscriptionId,
      customer: "cus_eve",
      status: "trialing",
      price: "price_team_m",
      start_date: unix("2026-11-01T09:59:58Z"),
      trial_end: unix("2026-11-15T10:00:00Z"),
    });
    await expectReceived(sendStripe(ctx, billing, stripeEvent("customer.subscription.created", subscription, created)));

    const expected = {
      voter_id: ids.voters.eve,
      customer_id: "cus_eve",
      matched_on: "stripe",
      subscription_id: subscriptionId,
      subscription_status: "trialing",
      subscribed_at: "2026-11-01T09:59:58.000Z",
      trial_ends_at: "2026-11-15T10:00:00.000Z",
      canceled_at: null,
      churned: false,
      churned_at: null,
      churn_source: null,
      last_synced_at: "2026-11-01T10:00:00.000Z",
      mrr_cents: 9900,
      mrr_source: "tier",
      tier: { id: ids.tiers.team, name: "Team", mrr_cents: 9900, multiplier: 2 },
    };
    expect(await revenueVoter(ctx, billing, "cus_eve")).toMatchObject(expected);
    expect(await adminVoter(ctx, billing, ids.voters.eve)).toMatchObject({ ...expected, stripe_customer_id: "cus_eve" });

    // Eve voted f1 and f3: both now have one more paying voter worth 9900 cents, weighted x2.
    const after = await revenueFeatures(ctx, billing);
    for (const feature of [ids.features.f1, ids.features.f3]) {
      expect(after.get(feature).paying_voters).toBe(before.get(feature).paying_voters + 1);
      expect(after.get(feature).mrr_cents).toBe(before.get(feature).mrr_cents + 9900);
      expect(after.get(feature).weighted_votes).toBe(before.get(feature).weighted_votes + 1);
    }
    expect(after.get(ids.features.f2)).toEqual(before.get(ids.features.f2));

    const events = await billingChangedEvents(ctx.db, billing.projectId);
    expect(events).toHaveLength(1);
    expect(events[0].object).toEqual(await adminVoter(ctx, billing, ids.voters.eve));
    expect(events[0].changes).toEqual({
      subscription_id: { from: null, to: subscriptionId },
      subscription_status: { from: null, to: "trialing" },
      subscribed_at: { from: null, to: "2026-11-01T09:59:58.000Z" },
      trial_ends_at: { from: null, to: "2026-11-15T10:00:00.000Z" },
      mrr_cents: { from: 0, to: 9900 },
      mrr_source: { from: "none", to: "tier" },
      tier: { from: null, to: ids.tiers.team },
    });
    expect(await counterProblems(ctx.db, billing.project.slug)).toEqual([]);
  });

  it("updated and trial_will_end: pass the status through, move the tier with the price, keep it for an unmapped price", async () => {
    const billing = await importBillingProject(ctx);
    const { ids } = billing;
    const id = vendorId("sub");
    const start = unix("2026-10-01T00:00:00Z");
    const send = (type: string, created: number, fields: Partial<Parameters<typeof stripeSubscription>[0]>) =>
      expectReceived(
        sendStripe(
          ctx,
          billing,
          stripeEvent(
            type,
            stripeSubscription({ id, customer: "cus_ada", status: "active", price: "price_pro_m", start_date: start, ...fields }),
            created,
          ),
        ),
      );

    await send("customer.subscription.trial_will_end", unix("2026-11-02T00:00:00Z"), {
      status: "trialing",
      trial_end: unix("2026-11-05T00:00:00Z"),
    });
    expect(await revenueVoter(ctx, billing, "cus_ada")).toMatchObject({
      subscription_id: id,
      subscription_status: "trialing",
      trial_ends_at: "2026-11-05T00:00:00.000Z",
      subscribed_at: "2026-10-01T00:00:00.000Z",
      last_synced_at: "2026-11-02T00:00:00.000Z",
      tier: { id: ids.tiers.pro },
    });

    await send("customer.subscription.updated", unix("2026-11-05T00:00:01Z"), {
      status: "past_due",
      price: "price_team_m",
      trial_end: unix("2026-11-05T00:00:00Z"),
    });
    expect(await revenueVoter(ctx, billing, "cus_ada")).toMatchObject({
      subscription_status: "past_due",
      trial_ends_at: "2026-11-05T00:00:00.000Z",
      mrr_cents: 9900,
      tier: { id: ids.tiers.team, name: "Team" },
      last_synced_at: "2026-11-05T00:00:01.000Z",
    });

    // A price no tier maps: the tier stays; the status is passed through uninterpreted.
    await send("customer.subscription.updated", unix("2026-11-06T00:00:00Z"), { status: "some_future_status", price: "price_unknown" });
    const ada = await revenueVoter(ctx, billing, "cus_ada");
    expect(ada).toMatchObject({ subscription_status: "some_future_status", tier: { id: ids.tiers.team }, trial_ends_at: null });

    const events = await billingChangedEvents(ctx.db, billing.projectId);
    expect(events).toHaveLength(3);
    expect(events[1].changes.tier).toEqual({ from: ids.tiers.pro, to: ids.tiers.team });
    expect(events[1].changes.mrr_cents).toEqual({ from: 4900, to: 9900 });
    expect(await counterProblems(ctx.db, billing.project.slug)).toEqual([]);
  });

  it("deleted: records churned, churned_at = ended_at and churn_source stripe; the revenue routes count the churn", async () => {
    const billing = await importBillingProject(ctx);
    const { ids } = billing;
    const id = vendorId("sub");
    const before = await revenueFeatures(ctx, billing);
    const subscription = stripeSubscription({
      id,
      customer: "cus_ada",
      status: "canceled",
      price: "price_pro_m",
      canceled_at: unix("2026-11-10T08:00:00Z"),
      ended_at: unix("2026-11-10T09:00:00Z"),
    });
    await expectReceived(
      sendStripe(ctx, billing, stripeEvent("customer.subscription.deleted", subscription, unix("2026-11-10T09:00:05Z"))),
    );
    const expected = {
      subscription_id: id,
      subscription_status: "canceled",
      canceled_at: "2026-11-10T08:00:00.000Z",
      churned: true,
      churned_at: "2026-11-10T09:00:00.000Z",
      churn_source: "stripe",
      last_synced_at: "2026-11-10T09:00:05.000Z",
      tier: { id: ids.tiers.pro },
    };
    expect(await revenueVoter(ctx, billing, "cus_ada")).toMatchObject(expected);
    expect(await adminVoter(ctx, billing, ids.voters.ada)).toMatchObject(expected);
    const churnedList = await expectStatus(
      await ctx.get(`/api/v3/projects/${billing.project.slug}/voters?churned=true&per_page=100`, billing.project.secretKey),
      200,
    );
    expect((churnedList.data as Schemas["RevenueVoterObject"][]).map((voter) => voter.voter_id)).toContain(ids.voters.ada);

    // Ada voted f1 and f2 on the pro tier: each now counts one more churned voter and 4900 cents less.
    const after = await revenueFeatures(ctx, billing);
    for (const feature of [ids.features.f1, ids.features.f2]) {
      expect(after.get(feature).churned_voters).toBe(before.get(feature).churned_voters + 1);
      expect(after.get(feature).mrr_cents).toBe(before.get(feature).mrr_cents - 4900);
    }
    expect(await counterProblems(ctx.db, billing.project.slug)).toEqual([]);
  });

  it("updated to incomplete_expired ends the subscription: churned_at is the event's time when no ended_at is sent", async () => {
    const billing = await importBillingProject(ctx);
    const created = unix("2026-11-11T12:00:00Z");
    const subscription = stripeSubscription({
      id: vendorId("sub"),
      customer: "cus_eve",
      status: "incomplete_expired",
      price: "price_team_m",
    });
    await expectReceived(sendStripe(ctx, billing, stripeEvent("customer.subscription.updated", subscription, created)));
    expect(await revenueVoter(ctx, billing, "cus_eve")).toMatchObject({
      subscription_status: "incomplete_expired",
      churned: true,
      churned_at: iso(created),
      churn_source: "stripe",
    });
  });

  it("a new live subscription after a Stripe churn clears the churn; a manual churn stays", async () => {
    const billing = await importBillingProject(ctx);
    const { ids } = billing;
    const old = stripeSubscription({
      id: vendorId("sub"),
      customer: "cus_ada",
      status: "canceled",
      price: "price_pro_m",
      ended_at: unix("2026-11-01T00:00:00Z"),
    });
    await expectReceived(sendStripe(ctx, billing, stripeEvent("customer.subscription.deleted", old, unix("2026-11-01T00:00:00Z"))));
    const fresh = stripeSubscription({ id: vendorId("sub"), customer: "cus_ada", status: "active", price: "price_team_m" });
    await expectReceived(sendStripe(ctx, billing, stripeEvent("customer.subscription.created", fresh, unix("2026-11-03T00:00:00Z"))));
    expect(await revenueVoter(ctx, billing, "cus_ada")).toMatchObject({
      subscription_id: fresh.id,
      subscription_status: "active",
      churned: false,
      churned_at: null,
      churn_source: null,
      tier: { id: ids.tiers.team },
    });

    await expectStatus(
      await ctx.send("PATCH", `/api/v3/projects/${billing.project.slug}/admin/voters/${ids.voters.eve}`, billing.project.secretKey, {
        churned: true,
      }),
      200,
    );
    const live = stripeSubscription({ id: vendorId("sub"), customer: "cus_eve", status: "active", price: "price_team_m" });
    await expectReceived(sendStripe(ctx, billing, stripeEvent("customer.subscription.created", live, unix("2026-11-03T00:00:00Z"))));
    expect(await revenueVoter(ctx, billing, "cus_eve")).toMatchObject({
      subscription_status: "active",
      churned: true,
      churn_source: "manual",
    });
    expect(await counterProblems(ctx.db, billing.project.slug)).toEqual([]);
  });
});

describe("invoice.* events", () => {
  it("invoice.paid and invoice.payment_failed set subscription_id, the tier and last_synced_at (both invoice shapes), not the status", async () => {
    const billing = await importBillingProject(ctx);
    const { ids } = billing;
    const id = vendorId("sub");
    const subscription = stripeSubscription({ id, customer: "cus_ada", status: "active", price: "price_pro_m" });
    await expectReceived(
      sendStripe(ctx, billing, stripeEvent("customer.subscription.created", subscription, unix("2026-11-01T00:00:00Z"))),
    );

    // Before API version 2025-03-31: invoice.subscription and lines.data[].price.
    const legacyInvoice = {
      id: vendorId("in"),
      object: "invoice",
      customer: "cus_ada",
      subscription: id,
      status: "paid",
      amount_paid: 9900,
      lines: { object: "list", data: [{ id: vendorId("il"), price: { id: "price_team_m" }, amount: 9900 }] },
    };
    await expectReceived(sendStripe(ctx, billing, stripeEvent("invoice.paid", legacyInvoice, unix("2026-11-02T00:00:00Z"))));
    expect(await revenueVoter(ctx, billing, "cus_ada")).toMatchObject({
      subscription_id: id,
      subscription_status: "active",
      tier: { id: ids.tiers.team },
      last_synced_at: "2026-11-02T00:00:00.000Z",
    });

    // Since 2025-03-31: parent.subscription_details.subscription and lines.data[].pricing.price_details.price.
    const invoice = {
      id: vendorId("in"),
      object: "invoice",
      customer: "cus_ada",
      status: "open",
      parent: { type: "subscription_details", subscription_details: { subscription: id } },
      lines: {
        object: "list",
        data: [{ id: vendorId("il"), pricing: { type: "price_details", price_details: { price: "price_pro_m" } } }],
      },
    };
    await expectReceived(sendStripe(ctx, billing, stripeEvent("invoice.payment_failed", invoice, unix("2026-11-03T00:00:00Z"))));
    expect(await revenueVoter(ctx, billing, "cus_ada")).toMatchObject({
      subscription_id: id,
      subscription_status: "active",
      churned: false,
      tier: { id: ids.tiers.pro },
      last_synced_at: "2026-11-03T00:00:00.000Z",
    });

    // A renewal that changes nothing but last_synced_at writes it and emits no event.
    const renewal = { ...legacyInvoice, id: vendorId("in"), lines: { data: [{ price: { id: "price_pro_m" } }] } };
    await expectReceived(sendStripe(ctx, billing, stripeEvent("invoice.paid", renewal, unix("2026-12-01T00:00:00Z"))));
    expect((await revenueVoter(ctx, billing, "cus_ada")).last_synced_at).toBe("2026-12-01T00:00:00.000Z");
    expect(await billingChangedEvents(ctx.db, billing.projectId)).toHaveLength(3);
    expect(await counterProblems(ctx.db, billing.project.slug)).toEqual([]);
  });

  it("an invoice of no subscription changes nothing", async () => {
    const billing = await importBillingProject(ctx);
    const before = await billingState(ctx.db, billing.projectId);
    const invoice = { id: vendorId("in"), object: "invoice", customer: "cus_ada", subscription: null, lines: { data: [] } };
    await expectReceived(sendStripe(ctx, billing, stripeEvent("invoice.paid", invoice, unix("2026-11-02T00:00:00Z"))));
    expect(await billingState(ctx.db, billing.projectId)).toEqual(before);
  });
});

describe("effects beyond the voter", () => {
  it("every voter carrying the customer id is synced, each with its own event", async () => {
    const billing = await importBillingProject(ctx);
    const { ids } = billing;
    await expectStatus(
      await ctx.send("PATCH", `/api/v3/projects/${billing.project.slug}/admin/voters/${ids.voters.cyd}`, billing.project.secretKey, {
        stripe_customer_id: "cus_ada",
      }),
      200,
    );
    const subscription = stripeSubscription({ id: vendorId("sub"), customer: "cus_ada", status: "active", price: "price_team_m" });
    await expectReceived(
      sendStripe(ctx, billing, stripeEvent("customer.subscription.created", subscription, unix("2026-11-01T00:00:00Z"))),
    );
    for (const voter of [ids.voters.ada, ids.voters.cyd]) {
      expect(await adminVoter(ctx, billing, voter)).toMatchObject({ subscription_id: subscription.id, tier: { id: ids.tiers.team } });
    }
    const events = await billingChangedEvents(ctx.db, billing.projectId);
    expect(events.map((event) => event.object.voter_id).sort()).toEqual([ids.voters.ada, ids.voters.cyd].sort());
  });

  it("a change gives the project a new content revision, and the voter's next vote is weighted by the new tier", async () => {
    const billing = await importBillingProject(ctx);
    const { ids } = billing;
    const revision = async () =>
      (await ctx.deps.rateLimiter.consumeReadingRevisions(`test:${billing.project.slug}`, 1000, 60, billing.projectId)).revisions?.content;
    const first = await revision();
    const subscription = stripeSubscription({ id: vendorId("sub"), customer: "cus_eve", status: "active", price: "price_team_m" });
    await expectReceived(
      sendStripe(ctx, billing, stripeEvent("customer.subscription.created", subscription, unix("2026-11-01T00:00:00Z"))),
    );
    expect(await revision()).not.toBe(first);

    const feature = `/api/v3/projects/${billing.project.slug}/admin/features/${ids.features.f2}`;
    const weighted = async () => (await expectStatus(await ctx.get(feature, billing.project.secretKey), 200)).data.weighted_score;
    const beforeVote = await weighted();
    await expectStatus(
      await ctx.send(
        "POST",
        `/api/v3/projects/${billing.project.slug}/features/${ids.features.f2}/vote`,
        billing.project.secretKey,
        undefined,
        {
          "X-VF-Anon": billing.eveToken,
        },
      ),
      200,
    );
    expect(await weighted()).toBe(beforeVote + 2);
    expect(await counterProblems(ctx.db, billing.project.slug)).toEqual([]);
  });
});
