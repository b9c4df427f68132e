/**
 * The voter fields a billing event sets (owner-api-v3.md, "Billing sync", table and paragraph),
 * as pure functions: churn with its source and time, who may clear a churn, what an invoice or
 * transaction (no subscription state) leaves, and Paddle times kept to the microsecond.
 */
import { describe, expect, it } from "vitest";
import { billingFieldsAfter, changedFields, type VoterBillingFields } from "../src/routes/billing/billing.fields.ts";
import { microsOf } from "../src/routes/billing/billing.paddle.ts";
import type { BillingChange } from "../src/routes/billing/billing.schemas.ts";

const at = (iso: string) => new Date(iso);

const voter: VoterBillingFields = {
  subscription_id: "sub_old",
  subscription_status: "active",
  subscribed_at: at("2026-01-01T00:00:00Z"),
  trial_ends_at: at("2026-01-15T00:00:00Z"),
  canceled_at: null,
  tier_id: 1,
  churned: false,
  churned_at: null,
  churn_source: null,
  last_synced_at: at("2026-02-01T00:00:00Z"),
};

function change(
  overrides: Partial<BillingChange> = {},
  state: Partial<NonNullable<BillingChange["subscription"]>> | null = {},
): BillingChange {
  const occurredAt = overrides.occurredAt ?? at("2026-03-01T00:00:00Z");
  return {
    system: "stripe",
    eventId: "evt_1",
    eventType: "customer.subscription.updated",
    occurredAt,
    occurredAtMicros: occurredAt.getTime() * 1000,
    customerId: "cus_1",
    subscriptionId: "sub_old",
    priceId: null,
    subscription:
      state === null
        ? null
        : {
            status: "active",
            subscribedAt: voter.subscribed_at,
            trialEndsAt: null,
            canceledAt: null,
            ended: false,
            endedAt: null,
            ...state,
          },
    ...overrides,
  };
}

describe("billingFieldsAfter", () => {
  it("an ended subscription records churn with the system as source, at ended time or else the event's time", () => {
    expect(
      billingFieldsAfter(voter, change({}, { status: "canceled", ended: true, endedAt: at("2026-02-20T00:00:00Z") }), undefined),
    ).toMatchObject({
      churned: true,
      churned_at: at("2026-02-20T00:00:00Z"),
      churn_source: "stripe",
      tier_id: 1,
    });
    const paddle = change({ system: "paddle" }, { status: "canceled", ended: true });
    expect(billingFieldsAfter(voter, paddle, undefined)).toMatchObject({
      churned: true,
      churned_at: paddle.occurredAt,
      churn_source: "paddle",
    });
  });

  it("a live subscription clears a churn its own system recorded, not a manual one or the other system's", () => {
    const churnedBy = (source: string) => ({ ...voter, churned: true, churned_at: at("2026-02-10T00:00:00Z"), churn_source: source });
    expect(billingFieldsAfter(churnedBy("stripe"), change(), undefined)).toMatchObject({
      churned: false,
      churned_at: null,
      churn_source: null,
    });
    expect(billingFieldsAfter(churnedBy("manual"), change(), undefined)).toMatchObject({ churned: true, churn_source: "manual" });
    expect(billingFieldsAfter(churnedBy("paddle"), change(), undefined)).toMatchObject({ churned: true, churn_source: "paddle" });
  });

  it("the tier follows a mapped price and stays otherwise; last_synced_at is the event's time", () => {
    expect(billingFieldsAfter(voter, change(), 7)).toMatchObject({ tier_id: 7, last_synced_at: at("2026-03-01T00:00:00Z") });
    expect(billingFieldsAfter(voter, change(), undefined).tier_id).toBe(1);
  });

  it("an invoice keeps the subscription state of the same subscription and clears another's", () => {
    expect(billingFieldsAfter(voter, change({}, null), undefined)).toMatchObject({
      subscription_status: "active",
      trial_ends_at: voter.trial_ends_at,
    });
    expect(billingFieldsAfter(voter, change({ subscriptionId: "sub_new" }, null), 2)).toMatchObject({
      subscription_id: "sub_new",
      subscription_status: null,
      subscribed_at: null,
      trial_ends_at: null,
      canceled_at: null,
      tier_id: 2,
      churned: false,
    });
  });

  it("changedFields compares dates by instant", () => {
    const same = billingFieldsAfter(
      voter,
      change({ occurredAt: new Date(voter.last_synced_at!.getTime()) }, { trialEndsAt: new Date(voter.trial_ends_at!.getTime()) }),
      undefined,
    );
    expect(changedFields(voter, same)).toEqual({});
  });
});

describe("microsOf", () => {
  it("keeps Paddle's microseconds and reads offsets", () => {
    expect(microsOf("2026-11-05T00:00:00.000002Z") - microsOf("2026-11-05T00:00:00.000001Z")).toBe(1);
    expect(microsOf("2026-11-05T00:00:00.123456Z")).toBe(Date.parse("2026-11-05T00:00:00Z") * 1000 + 123_456);
    expect(microsOf("2026-11-05T01:00:00+01:00")).toBe(Date.parse("2026-11-05T00:00:00Z") * 1000);
    expect(microsOf("2026-11-05T00:00:00.5Z")).toBe(Date.parse("2026-11-05T00:00:00Z") * 1000 + 500_000);
  });
});
