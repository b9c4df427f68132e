/**
 * The revenue routes on a generated dataset (contract, "Revenue"; docs/decisions.md, "Revenue reporting"):
 * two projects sharing the votes table, one where 75% of the voters have a tier and one where
 * 20% do, filled in bulk by SQL (so the stored aggregates are kept by their triggers alone).
 * Every page of GET /revenue/features, in every sort, must list every feature once, in the
 * sort's order, with the figures a from-scratch COUNT/SUM over the vote rows gives; the page
 * statement must read no vote or voter row (the report's cost follows features x tiers); and
 * GET /voters must count what the rows hold.
 *
 * Size: REVENUE_SCALE (default 1) multiplies 120 features, 1,000 voters and 6 votes each per
 * project; REVENUE_SCALE=8 approaches the old one-off measurement (1,000 features, 200,000 votes).
 */
import { CompiledQuery, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileOnlyDatabase } from "../db/connect.ts";
import { listRevenueFeatures } from "../src/routes/revenue/revenue.features.repository.ts";
import { type Answer, body, createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";
import { fromScratch } from "./support/revenue.fixture.ts";

const scale = Math.max(1, Number(process.env.REVENUE_SCALE ?? 1));
const FEATURES = Math.round(120 * scale);
const VOTERS = Math.round(1000 * scale);
const VOTES_PER_VOTER = 6;

let ctx: TestContext;

/**
 * Fills a project with FEATURES features (every ninth awaiting approval, every fifth without
 * effort), VOTERS voters (voter g has a tier when g % 20 < payingTwentieths; overrides, churn,
 * Stripe and Paddle ids spread over them) and VOTES_PER_VOTER distinct votes per voter.
 */
async function fill(project: ImportedProject, payingTwentieths: number): Promise<number> {
  const { db } = ctx;
  const { id: projectId } = await db.selectFrom("projects").select("id").where("slug", "=", project.slug).executeTakeFirstOrThrow();
  const columnId = project.ids.ids.columns["c-open"] as number;
  const { board_id: boardId } = await db.selectFrom("columns").select("board_id").where("id", "=", columnId).executeTakeFirstOrThrow();
  const [t1, t2, t3] = Object.values(project.ids.ids.tiers) as number[];
  await sql`INSERT INTO features (project_id, board_id, column_id, status, heading, is_approved, effort)
    SELECT ${projectId}::int, ${boardId}::int, ${columnId}::int, 'open', 'Feature ' || g, g % 9 <> 0,
           CASE WHEN g % 5 = 0 THEN NULL ELSE g % 13 END
    FROM generate_series(1, ${FEATURES}::int) g`.execute(db);
  await sql`INSERT INTO voters (public_id, project_id, kind, display_name, tier_id, mrr_override_cents, churned,
                                stripe_customer_id, paddle_customer_id, vote_count)
    SELECT 'scale_' || ${projectId} || '_' || g, ${projectId}, 'anonymous', 'Voter ' || g,
           CASE WHEN g % 20 >= ${payingTwentieths}::int THEN NULL
                WHEN g % 3 = 0 THEN ${t1}::int WHEN g % 3 = 1 THEN ${t2}::int ELSE ${t3}::int END,
           CASE WHEN g % 17 = 0 THEN 1234 END, g % 11 = 0,
           CASE WHEN g % 3 = 0 THEN 'cus_' || ${projectId} || '_' || g END,
           CASE WHEN g % 3 = 1 THEN 'ctm_' || ${projectId} || '_' || g END, ${VOTES_PER_VOTER}::int
    FROM generate_series(1, ${VOTERS}::int) g`.execute(db);
  // Distinct features per voter: (v*7 + k*(FEATURES/VOTES_PER_VOTER + 1)) mod FEATURES differs for each k.
  const stride = Math.floor(FEATURES / VOTES_PER_VOTER) + 1;
  await sql`INSERT INTO votes (feature_id, voter_id, project_id, weight, created_at)
    SELECT f.id, v.id, ${projectId}, 1, now() - (((v.n * 13 + k * 7) % 8760) || ' hours')::interval
    FROM (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM voters WHERE project_id = ${projectId}) v
    CROSS JOIN generate_series(0, ${VOTES_PER_VOTER - 1}::int) k
    JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM features WHERE project_id = ${projectId}) f
      ON f.n = (v.n * 7 + k * ${stride}::int) % ${FEATURES}::int`.execute(db);
  // The headcount counter is kept by the vote routes and the importer, not by triggers.
  await sql`UPDATE features f SET vote_count = c.n FROM (
      SELECT feature_id, count(*)::int AS n FROM votes WHERE project_id = ${projectId} GROUP BY feature_id) c
    WHERE f.id = c.feature_id`.execute(db);
  return projectId;
}

const tiers = () => ({
  tiers: [
    { ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 3 },
    { ref: "biz", name: "Business", mrr_cents: 19900, multiplier: 5 },
    { ref: "team", name: "Team", mrr_cents: 9900, multiplier: 2 },
  ],
});

type RevenueFeatures = Answer<"/api/v3/projects/{slug}/revenue/features", "get">;
type RevenueFeature = RevenueFeatures["data"][number];
/** The figures a recomputation gives (fromScratch) for one feature. */
type Figures = Pick<RevenueFeature, "id" | "vote_count" | "weighted_votes" | "mrr_cents">;

/** Every row of every page (per_page 100) of /revenue/features?sort=, and the meta of the first. */
async function allPages(project: ImportedProject, sort: string): Promise<{ rows: RevenueFeature[]; total: number }> {
  const rows: RevenueFeature[] = [];
  let total = -1;
  for (let page = 1; ; page++) {
    const response = await ctx.get(
      `/api/v3/projects/${project.slug}/revenue/features?sort=${sort}&per_page=100&page=${page}`,
      project.secretKey,
    );
    expect(response.status).toBe(200);
    const { data, meta } = await body<RevenueFeatures>(response);
    if (page === 1) total = meta.total;
    rows.push(...data);
    if (data.length < 100) return { rows, total };
  }
}

/** The order each sort defines (docs/decisions.md, "Revenue reporting"), ties by id ascending. */
function expectedOrder(sort: string, figures: Figures[], effort: Map<number, number | null>): number[] {
  const key = (row: Figures): number => {
    switch (sort) {
      case "mrr":
        return row.mrr_cents;
      case "votes":
        return row.vote_count;
      case "weighted":
        return row.weighted_votes;
      default: {
        const e = effort.get(row.id);
        return e !== null && e !== undefined && e > 0 ? row.weighted_votes / e : Number.NEGATIVE_INFINITY;
      }
    }
  };
  return [...figures].sort((a, b) => key(b) - key(a) || a.id - b.id).map((row) => row.id);
}

const FIGURES = ["id", "vote_count", "weighted_votes", "paying_voters", "churned_voters", "mrr_cents", "top_tier"] as const;
const figuresOf = (row: RevenueFeature) => Object.fromEntries(FIGURES.map((field) => [field, row[field]]));

describe("revenue routes on a generated dataset", () => {
  const projects: Array<{ label: string; project: ImportedProject; projectId: number }> = [];

  beforeAll(async () => {
    ctx = await createTestContext();
    for (const [label, paying] of [
      ["75% with a tier", 15],
      ["20% with a tier", 4],
    ] as const) {
      const project = await ctx.importProject(tiers());
      projects.push({ label, project, projectId: await fill(project, paying) });
    }
    await sql`ANALYZE votes`.execute(ctx.db);
    await sql`ANALYZE voters`.execute(ctx.db);
  }, 600_000);
  afterAll(() => ctx?.close());

  it("lists every feature once per sort, in the sort's order, with from-scratch COUNT/SUM figures", async () => {
    for (const { label, project, projectId } of projects) {
      const figures = await fromScratch(ctx.db, projectId);
      expect(figures, label).toHaveLength(FEATURES);
      // The dataset exercises every figure: paying, churned and overridden voters on most features.
      expect(figures.filter((row) => row.paying_voters > 0 && row.churned_voters > 0).length, label).toBeGreaterThan(FEATURES / 4);
      const byId = new Map(figures.map((row) => [row.id, row]));
      const effort = new Map(
        (await ctx.db.selectFrom("features").select(["id", "effort"]).where("project_id", "=", projectId).execute()).map((row) => [
          row.id,
          row.effort,
        ]),
      );
      for (const sort of ["mrr", "votes", "weighted", "priority"]) {
        const { rows, total } = await allPages(project, sort);
        expect(total, `${label} ${sort}`).toBe(FEATURES);
        expect(
          rows.map((row) => row.id),
          `${label} ${sort}`,
        ).toEqual(expectedOrder(sort, figures, effort));
        expect(rows.map(figuresOf), `${label} ${sort}`).toEqual(rows.map((row) => byId.get(row.id)));
      }
    }
  });

  it("reads the page from the stored aggregates: the statement's plan touches no vote or voter row", async () => {
    const { projectId } = projects[0]!;
    for (const sort of ["mrr", "votes", "weighted", "priority"] as const) {
      const statements: CompiledQuery[] = [];
      // Compiled only (no rows come back, so the count that follows finds none and throws).
      await listRevenueFeatures(
        compileOnlyDatabase((query) => statements.push(query)),
        projectId,
        sort,
        { page: 2, per_page: 20 },
      ).catch(() => undefined);
      const page = statements[0]!;
      const { rows } = await ctx.db.executeQuery<{ "QUERY PLAN": unknown }>(
        CompiledQuery.raw(`EXPLAIN (FORMAT JSON) ${page.sql}`, [...page.parameters]),
      );
      const plan = JSON.stringify(rows[0]!["QUERY PLAN"]);
      const relations = [...plan.matchAll(/"Relation Name":\s*"(\w+)"/g)].map((match) => match[1]);
      expect(relations.length, sort).toBeGreaterThan(0);
      expect(
        relations.filter((name) => name === "votes" || name === "voters"),
        sort,
      ).toEqual([]);
    }
  });

  it("voters: the list and its filters count what the rows hold", async () => {
    for (const { label, project, projectId } of projects) {
      const count = async (where: "all" | "churned") => {
        let query = ctx.db.selectFrom("voters").select(sql<number>`count(*)::int`.as("n")).where("project_id", "=", projectId);
        if (where === "churned") query = query.where("churned", "=", true);
        return (await query.executeTakeFirstOrThrow()).n;
      };
      for (const [query, expected] of [
        ["?per_page=100", await count("all")],
        ["?churned=true&per_page=100", await count("churned")],
      ] as const) {
        const response = await ctx.get(`/api/v3/projects/${project.slug}/voters${query}`, project.secretKey);
        expect(response.status).toBe(200);
        expect((await body<Answer<"/api/v3/projects/{slug}/voters", "get">>(response)).meta.total, `${label} ${query}`).toBe(expected);
      }
    }
  });
});
