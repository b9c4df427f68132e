/**
 * GET /projects/{slug}/revenue/features (contract, "Revenue"): figures, sorts, meta; and the
 * security of both revenue routes (secret key only, PRO plan) and that no revenue figure leaks
 * onto the public routes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, body, createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";
import { revenueSnapshot } from "./support/revenue.fixture.ts";

let ctx: TestContext;
let main: ImportedProject;
let free: ImportedProject;

beforeAll(async () => {
  ctx = await createTestContext();
  main = await ctx.importProject(revenueSnapshot());
  free = await ctx.importProject(revenueSnapshot({ plan: "free" }));
});
afterAll(() => ctx.close());

const featureId = (ref: string) => main.ids.ids.features[ref] as number;
const path = (query = "") => `/api/v3/projects/${main.slug}/revenue/features${query}`;

type RevenueFeatures = Answer<"/api/v3/projects/{slug}/revenue/features", "get">;

async function listFeatures(query = ""): Promise<RevenueFeatures> {
  const response = await ctx.get(path(query), main.secretKey);
  expect(response.status).toBe(200);
  return body(response);
}

const refsOf = (envelope: RevenueFeatures) => {
  const byId = new Map(Object.entries(main.ids.ids.features).map(([ref, id]) => [id, ref]));
  return envelope.data.map((f) => byId.get(f.id));
};

const figures = (
  id: number,
  heading: string,
  status: string,
  vote_count: number,
  weighted_votes: number,
  paying_voters: number,
  churned_voters: number,
  mrr_cents: number,
  top_tier: string | null,
) => ({ id, heading, status, vote_count, weighted_votes, paying_voters, churned_voters, mrr_cents, top_tier, currency_symbol: "€" });

describe("GET /projects/{slug}/revenue/features", () => {
  it("lists every feature (unapproved, denied, archived included) with hand-computed figures, mrr first", async () => {
    const envelope = await listFeatures();
    expect(envelope.data).toEqual([
      figures(featureId("f2"), "SSO login", "open", 4, 12, 3, 1, 19900, "Pro"),
      figures(featureId("f4"), "Old idea", "archived", 2, 10, 2, 1, 15000, "Business"),
      figures(featureId("f7"), "Tie break", "open", 2, 5, 2, 0, 9800, "Pro"),
      figures(featureId("f3"), "CSV export", "denied", 2, 8, 2, 1, 4900, "Business"),
      figures(featureId("f1"), "Dark mode", "planned", 2, 2, 0, 0, 0, null),
      figures(featureId("f5"), "Webhooks", "planned", 3, 5, 1, 1, 0, "Pro"),
      figures(featureId("f6"), "No votes", "open", 0, 0, 0, 0, 0, null),
    ]);
    expect(envelope.meta).toEqual({ page: 1, per_page: 20, total: 7, total_pages: 1, has_more: false });
    expect(envelope.error).toBeNull();
    expect(refsOf(await listFeatures("?sort=mrr"))).toEqual(refsOf(envelope));
  });

  it("sorts by plain headcount", async () => {
    expect(refsOf(await listFeatures("?sort=votes"))).toEqual(["f2", "f5", "f1", "f3", "f4", "f7", "f6"]);
  });

  it("sorts by weighted votes, ties by id", async () => {
    expect(refsOf(await listFeatures("?sort=weighted"))).toEqual(["f2", "f4", "f3", "f5", "f7", "f1", "f6"]);
  });

  it("sorts by priority (weighted / effort), features without effort last", async () => {
    // f5 5/1, f2 12/5, f1 2/4, f6 0/2; then f3 (null), f4 (0), f7 (null) by id.
    expect(refsOf(await listFeatures("?sort=priority"))).toEqual(["f5", "f2", "f1", "f6", "f3", "f4", "f7"]);
  });

  it("paginates in SQL with meta arithmetic", async () => {
    const second = await listFeatures("?per_page=3&page=2");
    expect(refsOf(second)).toEqual(["f3", "f1", "f5"]);
    expect(second.meta).toEqual({ page: 2, per_page: 3, total: 7, total_pages: 3, has_more: true });
    const last = await listFeatures("?per_page=3&page=3&sort=votes");
    expect(refsOf(last)).toEqual(["f6"]);
    expect(last.meta).toEqual({ page: 3, per_page: 3, total: 7, total_pages: 3, has_more: false });
  });

  it("weights by the voters' current tiers, not by the weight recorded when they voted", async () => {
    const project = await ctx.importProject({
      tiers: [
        { ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 3 },
        { ref: "biz", name: "Business", mrr_cents: 19900, multiplier: 5 },
      ],
      voters: [
        { ref: "x", kind: "anonymous", tier: "pro" },
        { ref: "y", kind: "anonymous" },
      ],
      features: [{ ref: "only", board: "roadmap", column: "c-open", heading: "Only" }],
      votes: [
        { voter: "x", feature: "only" },
        { voter: "y", feature: "only" },
      ],
    });
    // A billing sync moves x up to Business and y onto Pro after they voted.
    const bizId = project.ids.ids.tiers.biz as number;
    const proId = project.ids.ids.tiers.pro as number;
    await ctx.db.updateTable("voters").set({ tier_id: bizId }).where("public_id", "=", project.ids.ids.voters.x).execute();
    await ctx.db.updateTable("voters").set({ tier_id: proId }).where("public_id", "=", project.ids.ids.voters.y).execute();
    const response = await ctx.get(`/api/v3/projects/${project.slug}/revenue/features`, project.secretKey);
    expect((await body(response)).data).toEqual([
      {
        id: project.ids.ids.features.only,
        heading: "Only",
        status: "open",
        vote_count: 2,
        weighted_votes: 8,
        paying_voters: 2,
        churned_voters: 0,
        mrr_cents: 24800,
        top_tier: "Business",
        currency_symbol: "$",
      },
    ]);
  });

  it.each([
    ["?sort=top", "sort"],
    ["?sort=", "sort"],
    ["?page=0", "page"],
    ["?per_page=0", "per_page"],
    ["?per_page=101", "per_page"],
  ])("refuses %s with 422 naming %s", async (query, field) => {
    const response = await ctx.get(path(query), main.secretKey);
    expect(response.status).toBe(422);
    expect((await body(response)).error).toEqual({ code: "validation_failed", field, message: expect.any(String) });
  });
});

describe("revenue routes: secret key only, PRO plan", () => {
  const routes = ["voters", "revenue/features"];

  it.each(routes)("/%s refuses the embed key with 403 not_allowed, even with a bad query", async (route) => {
    for (const query of ["", "?sort=bogus&churned=maybe"]) {
      const response = await ctx.get(`/api/v3/projects/${main.slug}/${route}${query}`, main.embedKey);
      expect(response.status).toBe(403);
      expect(await body(response)).toEqual({
        data: null,
        meta: null,
        error: { code: "not_allowed", field: null, message: expect.any(String) },
      });
    }
  });

  it.each(routes)("/%s refuses a project below PRO with 403 not_allowed", async (route) => {
    const response = await ctx.get(`/api/v3/projects/${free.slug}/${route}`, free.secretKey);
    expect(response.status).toBe(403);
    expect((await body(response)).error.code).toBe("not_allowed");
  });

  it.each(routes)("/%s answers the secret key, a missing key and another project's key", async (route) => {
    expect((await ctx.get(`/api/v3/projects/${main.slug}/${route}`, main.secretKey)).status).toBe(200);
    const missing = await ctx.app.request(`/api/v3/projects/${main.slug}/${route}`);
    expect(missing.status).toBe(401);
    expect((await body(missing)).error.code).toBe("missing_key");
    const foreign = await ctx.get(`/api/v3/projects/${free.slug}/${route}`, main.secretKey);
    expect(foreign.status).toBe(403);
    expect((await body(foreign)).error.code).toBe("key_wrong_project");
  });
});

describe("public routes carry no revenue figure", () => {
  const revenueKeys =
    /"(mrr_cents|mrr_source|mrr_override_cents|tier|tier_id|customer_id|matched_on|stripe_customer_id|paddle_customer_id|subscription_id|subscription_status|churned|churned_at|churn_source|paying_voters|churned_voters|weighted_votes|top_tier|company|email)"\s*:/;
  const publicPaths = () => [
    `/api/v3/projects/${main.slug}`,
    `/api/v3/projects/${main.slug}/features`,
    `/api/v3/projects/${main.slug}/features?scope=project&per_page=100`,
    `/api/v3/projects/${main.slug}/features/${featureId("f2")}`,
    `/api/v3/projects/${main.slug}/features/${featureId("f1")}`,
  ];

  it("the board document and features routes (where they exist yet) show none", async ({ skip }) => {
    let served = 0;
    for (const publicPath of publicPaths()) {
      for (const key of [main.secretKey, main.embedKey]) {
        const response = await ctx.get(publicPath, key);
        const text = await response.text();
        // A route another engineer has not mounted yet answers 404 "no such route".
        if (response.status === 404 && text.includes("no such route")) continue;
        // Only a served body can leak; f2 awaits approval and answers 404 not_found to the public.
        if (response.status === 200) served++;
        expect(text).not.toMatch(revenueKeys);
        for (const billingId of ["cus_ada", "ctm_bob", "cus_cyd", "ctm_eve"]) expect(text).not.toContain(billingId);
      }
    }
    if (served === 0) skip("no public board or features route is mounted yet");
  });
});
