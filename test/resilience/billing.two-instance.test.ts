/**
 * Billing sync across instances (owner-api-v3.md, "Billing sync": the revenue routes reflect a
 * billing event at once; "Common rules": on every instance). Two server processes on one
 * Postgres and one Redis: an event delivered to A shows on B's very next revenue read; 200
 * concurrent deliveries of a burst, split over both instances, end as the events applied once in
 * time order; a body of 1 MB + 1 byte over a real connection is 413 with Connection: close.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signStripe, stripeEvent, stripeSubscription, unix, vendorId } from "../support/billing.fixture.ts";
import type { Json } from "../support/harness.ts";
import { accountsSnapshot } from "../support/owner-accounts.fixture.ts";
import { json, send } from "./support/http.ts";
import { type ServerInstance, startServer } from "./support/server.ts";
import { type Stack, startStack } from "./support/stack.ts";

let stack: Stack;
let b: ServerInstance;

beforeAll(async () => {
  stack = await startStack();
  b = await startServer(stack.env);
}, 120_000);
afterAll(async () => {
  await b?.stop();
  await stack?.close();
});

const STRIPE_SECRET = "whsec_dHdvIGluc3RhbmNlcyBiaWxsaW5nIHRlc3Qgc2VjcmV0";

async function importProject() {
  const { overrides } = accountsSnapshot();
  overrides.project.stripe_webhook_secret = STRIPE_SECRET;
  overrides.tiers.push({ ref: "team", name: "Team", mrr_cents: 9900, multiplier: 2, stripe_price_ids: ["price_team_m"] });
  return stack.seeder.importProject(overrides);
}

function deliver(origin: string, slug: string, event: Json) {
  const body = JSON.stringify(event);
  return send(origin, {
    method: "POST",
    path: `/api/v3/billing/stripe/${slug}`,
    headers: { "Content-Type": "application/json", "Stripe-Signature": signStripe(body, STRIPE_SECRET) },
    body,
    timeoutMs: 30_000,
  });
}

async function revenue(origin: string, project: { slug: string; secretKey: string }) {
  const headers = { "X-API-Key": project.secretKey };
  const voter = json(await send(origin, { path: `/api/v3/projects/${project.slug}/voters?customer_id=cus_ada`, headers })).data[0];
  const features = json(await send(origin, { path: `/api/v3/projects/${project.slug}/revenue/features?sort=votes`, headers })).data;
  return { voter, features };
}

describe("billing events through instance A, revenue reads through instance B", () => {
  it("B's very next revenue read shows the tier change and the churn", async () => {
    const project = await importProject();
    const id = vendorId("sub");
    expect((await revenue(b.origin, project)).voter).toMatchObject({ tier: { name: "Pro" }, subscription_id: null });
    expect((await revenue(b.origin, project)).voter.tier.name).toBe("Pro");

    const active = stripeSubscription({ id, customer: "cus_ada", status: "active", price: "price_team_m" });
    expect(
      (await deliver(stack.server.origin, project.slug, stripeEvent("customer.subscription.updated", active, unix("2026-11-01T00:00:00Z"))))
        .status,
    ).toBe(200);
    const upgraded = await revenue(b.origin, project);
    expect(upgraded.voter).toMatchObject({ subscription_id: id, subscription_status: "active", tier: { name: "Team" }, mrr_cents: 9900 });

    const ended = stripeSubscription({
      id,
      customer: "cus_ada",
      status: "canceled",
      price: "price_team_m",
      ended_at: unix("2026-11-02T00:00:00Z"),
    });
    expect(
      (await deliver(stack.server.origin, project.slug, stripeEvent("customer.subscription.deleted", ended, unix("2026-11-02T00:00:00Z"))))
        .status,
    ).toBe(200);
    const churned = await revenue(b.origin, project);
    expect(churned.voter).toMatchObject({ churned: true, churn_source: "stripe", churned_at: "2026-11-02T00:00:00.000Z" });
    const f1 = (features: Json[]) => features.find((feature) => feature.heading === "Feature f1");
    expect(f1(churned.features).churned_voters).toBe(f1(upgraded.features).churned_voters + 1);
  });

  it("200 concurrent deliveries split over both instances end as the distinct events applied once in time order", async () => {
    const inOrder = await importProject();
    const burst = await importProject();
    const first = vendorId("sub");
    const second = vendorId("sub");
    const t0 = unix("2026-11-01T00:00:00Z");
    const sub = (id: string, status: string, price: string, extra: Json = {}) =>
      stripeSubscription({ id, customer: "cus_ada", status, price, start_date: t0, ...extra });
    const events = [
      stripeEvent("customer.subscription.created", sub(first, "trialing", "price_pro_m", { trial_end: t0 + 86_400 }), t0),
      stripeEvent("customer.subscription.updated", sub(first, "active", "price_team_m", { trial_end: t0 + 86_400 }), t0 + 100),
      stripeEvent(
        "invoice.paid",
        { customer: "cus_ada", subscription: first, lines: { data: [{ price: { id: "price_team_m" } }] } },
        t0 + 150,
      ),
      stripeEvent("customer.subscription.updated", sub(first, "past_due", "price_team_m", { trial_end: t0 + 86_400 }), t0 + 200),
      stripeEvent("customer.subscription.deleted", sub(first, "canceled", "price_team_m", { ended_at: t0 + 300 }), t0 + 300),
      stripeEvent("customer.subscription.created", sub(second, "active", "price_pro_m"), t0 + 400),
      stripeEvent("customer.subscription.updated", sub(second, "active", "price_team_m"), t0 + 500),
    ];
    for (const event of events) expect((await deliver(stack.server.origin, inOrder.slug, event)).status).toBe(200);

    const deliveries = Array.from({ length: 200 }, (_, i) => events[(i * 3) % events.length]!);
    const results = await Promise.all(
      deliveries.map((event, i) => deliver(i % 2 === 0 ? stack.server.origin : b.origin, burst.slug, event)),
    );
    expect(results.map((result) => result.status)).toEqual(deliveries.map(() => 200));

    const strip = ({ voter, features }: Json) => ({
      voter: { ...voter, voter_id: undefined, tier: voter.tier?.name, votes: voter.votes.map((vote: Json) => vote.heading) },
      features: features.map(({ id: _id, ...feature }: Json) => feature),
    });
    const expected = strip(await revenue(stack.server.origin, inOrder));
    expect(expected.voter).toMatchObject({ subscription_id: second, churned: false, tier: "Team" });
    expect(strip(await revenue(b.origin, burst))).toEqual(expected);
    const processed = await stack.seeder.handle.db
      .selectFrom("billing_events")
      .innerJoin("projects", "projects.id", "billing_events.project_id")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("projects.slug", "=", burst.slug)
      .executeTakeFirstOrThrow();
    expect(Number(processed.n)).toBe(events.length);
  });

  it("a body of 1 MB + 1 byte over a real connection is 413 too_large with Connection: close", async () => {
    const project = await importProject();
    const body = Buffer.alloc(1024 * 1024 + 1, "x");
    const result = await send(
      stack.server.origin,
      {
        method: "POST",
        path: `/api/v3/billing/stripe/${project.slug}`,
        headers: { "Content-Type": "application/json", "Stripe-Signature": "t=1,v1=00" },
        body,
      },
      { fresh: true },
    );
    expect(result.status).toBe(413);
    expect(result.headers.connection).toBe("close");
    expect(json(result).error.code).toBe("too_large");
  });
});
