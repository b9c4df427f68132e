/** GET /projects/{slug}/voters (contract, "Revenue"): objects, filters, order, votes cut, meta. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, body, createTestContext, type ErrorAnswer, type ImportedProject, type TestContext } from "./support/harness.ts";
import { heavyVoterSnapshot, revenueSnapshot } from "./support/revenue.fixture.ts";

let ctx: TestContext;
let main: ImportedProject;
let heavy: ImportedProject;

beforeAll(async () => {
  ctx = await createTestContext();
  main = await ctx.importProject(revenueSnapshot());
  heavy = await ctx.importProject(heavyVoterSnapshot());
});
afterAll(() => ctx.close());

const voterId = (ref: string) => main.ids.ids.voters[ref] as string;
const featureId = (ref: string) => main.ids.ids.features[ref] as number;
const tierId = (ref: string) => main.ids.ids.tiers[ref] as number;

type RevenueVoters = Answer<"/api/v3/projects/{slug}/voters", "get">;

async function listVoters(query = "", project = main): Promise<RevenueVoters> {
  const response = await ctx.get(`/api/v3/projects/${project.slug}/voters${query}`, project.secretKey);
  expect(response.status).toBe(200);
  return body<RevenueVoters>(response);
}

const names = (envelope: RevenueVoters) => envelope.data.map((v) => v.display_name);

describe("GET /projects/{slug}/voters", () => {
  it("lists every voter in creation order with a Meta object", async () => {
    const envelope = await listVoters();
    expect(names(envelope)).toEqual(["Ada", "BOB", "CYD", "DEE", "EVE", "FAY", "HAL"]);
    expect(envelope.meta).toEqual({ page: 1, per_page: 20, total: 7, total_pages: 1, has_more: false });
    expect(envelope.error).toBeNull();
  });

  it("maps a tier voter with a Stripe id, every field present", async () => {
    const [ada] = (await listVoters("?customer_id=cus_ada")).data;
    expect(ada).toEqual({
      voter_id: voterId("ada"),
      display_name: "Ada",
      company: "Ada Co",
      customer_id: "cus_ada",
      matched_on: "stripe",
      subscription_id: "sub_ada",
      subscription_status: "active",
      subscribed_at: "2026-01-01T00:00:00.000Z",
      trial_ends_at: null,
      canceled_at: null,
      churned: false,
      churned_at: null,
      churn_source: null,
      last_synced_at: "2026-11-20T04:00:00.000Z",
      mrr_cents: 4900,
      mrr_source: "tier",
      currency_symbol: "€",
      tier: { id: tierId("pro"), name: "Pro", mrr_cents: 4900, multiplier: 3 },
      vote_count: 3,
      votes: [
        { feature_id: featureId("f3"), heading: "CSV export", voted_at: "2026-10-03T00:00:00.000Z" },
        { feature_id: featureId("f7"), heading: "Tie break", voted_at: "2026-10-02T00:00:00.000Z" },
        { feature_id: featureId("f2"), heading: "SSO login", voted_at: "2026-10-01T00:00:00.000Z" },
      ],
    });
  });

  it("maps an override on a Paddle customer, a churned voter and voters without tier", async () => {
    const byName = new Map((await listVoters()).data.map((v) => [v.display_name, v]));
    expect(byName.get("BOB")).toMatchObject({
      customer_id: "ctm_bob",
      matched_on: "paddle",
      mrr_cents: 15000,
      mrr_source: "override",
      subscription_status: "trialing",
      trial_ends_at: "2026-12-01T00:00:00.000Z",
      churned: false,
      tier: { id: tierId("biz"), name: "Business", mrr_cents: 19900, multiplier: 5 },
      vote_count: 2,
    });
    // Without a filter the Stripe id wins when a voter carries both.
    expect(byName.get("CYD")).toMatchObject({
      customer_id: "cus_cyd",
      matched_on: "stripe",
      churned: true,
      churned_at: "2026-09-30T00:00:00.000Z",
      churn_source: "stripe",
      canceled_at: "2026-09-01T00:00:00.000Z",
      mrr_cents: 4900,
      mrr_source: "tier",
    });
    expect(byName.get("DEE")).toMatchObject({
      company: null,
      customer_id: null,
      matched_on: null,
      subscription_id: null,
      subscription_status: null,
      mrr_cents: 0,
      mrr_source: "none",
      tier: null,
      vote_count: 3,
      churned: false,
    });
    expect(byName.get("EVE")).toMatchObject({ churned: true, churn_source: "manual", mrr_cents: 19900, mrr_source: "tier" });
    expect(byName.get("FAY")).toMatchObject({ customer_id: null, matched_on: null, mrr_cents: 2500, mrr_source: "override", tier: null });
    expect(byName.get("HAL")).toMatchObject({
      mrr_cents: 4900,
      tier: { id: tierId("legacy"), name: "Legacy", mrr_cents: 4900, multiplier: 2 },
    });
  });

  it("orders votes newest first, equal timestamps by feature id descending", async () => {
    const dee = (await listVoters()).data.find((v) => v.display_name === "DEE")!;
    expect(dee.votes.map((v) => v.feature_id)).toEqual([featureId("f5"), featureId("f1"), featureId("f2")]);
    expect(dee.votes[2]!.voted_at).toBe("2026-10-04T12:00:00.000Z");
  });

  it("matches customer_id against both billing columns and reports the one that matched", async () => {
    const paddle = await listVoters("?customer_id=ctm_cyd");
    expect(paddle.data).toHaveLength(1);
    expect(paddle.data[0]).toMatchObject({ voter_id: voterId("cyd"), customer_id: "ctm_cyd", matched_on: "paddle" });
    const stripe = await listVoters("?customer_id=cus_cyd");
    expect(stripe.data[0]).toMatchObject({ voter_id: voterId("cyd"), customer_id: "cus_cyd", matched_on: "stripe" });
    const bob = await listVoters("?customer_id=ctm_bob");
    expect(bob.data.map((v) => v.voter_id)).toEqual([voterId("bob")]);
    expect(bob.meta.total).toBe(1);
  });

  it("answers an id nobody carries with an empty list, not 404", async () => {
    const envelope = await listVoters("?customer_id=cus_nobody");
    expect(envelope).toEqual({ data: [], meta: { page: 1, per_page: 20, total: 0, total_pages: 0, has_more: false }, error: null });
    // Another project's customer is nobody here.
    expect((await listVoters("?customer_id=cus_heavy")).data).toEqual([]);
  });

  it("filters by churned", async () => {
    expect(names(await listVoters("?churned=true"))).toEqual(["CYD", "EVE"]);
    expect(names(await listVoters("?churned=false"))).toEqual(["Ada", "BOB", "DEE", "FAY", "HAL"]);
  });

  it("filters by feature_id, alone and combined", async () => {
    expect(names(await listVoters(`?feature_id=${featureId("f2")}`))).toEqual(["Ada", "BOB", "CYD", "DEE"]);
    expect(names(await listVoters(`?feature_id=${featureId("f5")}&churned=true`))).toEqual(["CYD"]);
    expect(names(await listVoters(`?feature_id=${featureId("f6")}`))).toEqual([]);
    expect(names(await listVoters(`?feature_id=${featureId("f4")}&customer_id=ctm_eve`))).toEqual(["EVE"]);
    // A feature of another project has no voters here.
    expect(names(await listVoters(`?feature_id=${heavy.ids.ids.features.h1}`))).toEqual([]);
  });

  it("paginates with meta arithmetic", async () => {
    const second = await listVoters("?per_page=2&page=2");
    expect(names(second)).toEqual(["CYD", "DEE"]);
    expect(second.meta).toEqual({ page: 2, per_page: 2, total: 7, total_pages: 4, has_more: true });
    const last = await listVoters("?per_page=2&page=4");
    expect(names(last)).toEqual(["HAL"]);
    expect(last.meta).toMatchObject({ total_pages: 4, has_more: false });
    const beyond = await listVoters("?per_page=2&page=9");
    expect(beyond.data).toEqual([]);
    expect(beyond.meta).toMatchObject({ page: 9, total: 7, has_more: false });
  });

  it("cuts votes at 100, newest first, while vote_count stays 105", async () => {
    const envelope = await listVoters("", heavy);
    const [heavyVoter, light] = envelope.data;
    expect(heavyVoter!.vote_count).toBe(105);
    expect(heavyVoter!.votes).toHaveLength(100);
    expect(heavyVoter!.votes[0]).toEqual({
      feature_id: heavy.ids.ids.features.h105,
      heading: "Heavy 105",
      voted_at: "2026-06-01T01:44:00.000Z",
    });
    expect(heavyVoter!.votes[99]!.feature_id).toBe(heavy.ids.ids.features.h6);
    // The cut is per voter: the next voter on the same page keeps all of theirs.
    expect(light!.vote_count).toBe(2);
    expect(light!.votes.map((v) => v.feature_id)).toEqual([heavy.ids.ids.features.h105, heavy.ids.ids.features.h1]);
  });

  it.each([
    ["?churned=yes", "churned"],
    ["?churned=1", "churned"],
    ["?churned=true&churned=false", "churned"],
    ["?feature_id=abc", "feature_id"],
    ["?feature_id=0", "feature_id"],
    ["?customer_id=", "customer_id"],
    ["?page=0", "page"],
    ["?per_page=101", "per_page"],
  ])("refuses %s with 422 naming %s", async (query, field) => {
    const response = await ctx.get(`/api/v3/projects/${main.slug}/voters${query}`, main.secretKey);
    expect(response.status).toBe(422);
    expect(await body<ErrorAnswer>(response)).toEqual({
      data: null,
      meta: null,
      error: { code: "validation_failed", field, message: expect.any(String) },
    });
  });
});
