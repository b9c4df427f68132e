/**
 * One-off measurement of the revenue routes at size: two projects of 1,000 features, 20,000
 * voters and 200,000 votes each (so the votes table is shared as in production), one where
 * 75% of the voters have a tier and one where 20% do. Not a timed assertion: it prints median
 * latencies and runs only when asked, on real Postgres:
 *
 *   REVENUE_PERF=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx vitest run test/revenue.perf.test.ts
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listRevenueFeatures } from "../src/routes/revenue/revenue.features.repository.ts";
import { createTestContext, type ImportedProject, type TestContext } from "./harness.ts";

const enabled = process.env.REVENUE_PERF === "1" && Boolean(process.env.DATABASE_URL);

let ctx: TestContext;

/**
 * Fills a project with 1,000 features, 20,000 voters and 10 votes each (200,000 votes); voter
 * g has a tier when g % 20 < payingTwentieths.
 */
async function fill(project: ImportedProject, payingTwentieths: number): Promise<number> {
  const { db } = ctx;
  const { id: projectId } = await db.selectFrom("projects").select("id").where("slug", "=", project.slug).executeTakeFirstOrThrow();
  const columnId = project.ids.ids.columns["c-open"] as number;
  const boardId = await db.selectFrom("columns").select("board_id").where("id", "=", columnId).executeTakeFirstOrThrow();
  const [t1, t2, t3] = Object.values(project.ids.ids.tiers) as number[];
  await sql`INSERT INTO features (project_id, board_id, column_id, status, heading, is_approved, effort)
    SELECT ${projectId}::int, ${boardId.board_id}::int, ${columnId}::int, 'open', 'Feature ' || g, g % 9 <> 0,
           CASE WHEN g % 5 = 0 THEN NULL ELSE g % 13 END
    FROM generate_series(1, 1000) g`.execute(db);
  await sql`INSERT INTO voters (public_id, project_id, kind, display_name, tier_id, mrr_override_cents, churned,
                                stripe_customer_id, paddle_customer_id, vote_count)
    SELECT 'perf_' || ${projectId} || '_' || g, ${projectId}, 'anonymous', 'Voter ' || g,
           CASE WHEN g % 20 >= ${payingTwentieths}::int THEN NULL
                WHEN g % 3 = 0 THEN ${t1}::int WHEN g % 3 = 1 THEN ${t2}::int ELSE ${t3}::int END,
           CASE WHEN g % 17 = 0 THEN 1234 END, g % 11 = 0,
           CASE WHEN g % 3 = 0 THEN 'cus_' || ${projectId} || '_' || g END,
           CASE WHEN g % 3 = 1 THEN 'ctm_' || ${projectId} || '_' || g END, 10
    FROM generate_series(1, 20000) g`.execute(db);
  // Ten distinct features per voter: (v*7 + k*101) mod 1000 differs for k = 0..9.
  await sql`INSERT INTO votes (feature_id, voter_id, project_id, weight, created_at)
    SELECT f.id, v.id, ${projectId}, 1, now() - (((v.n * 13 + k * 7) % 8760) || ' hours')::interval
    FROM (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM voters WHERE project_id = ${projectId}) v
    CROSS JOIN generate_series(0, 9) k
    JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM features WHERE project_id = ${projectId}) f
      ON f.n = (v.n * 7 + k * 101) % 1000`.execute(db);
  // The stored counter the report reads for headcount (the importer and vote routes keep it).
  await sql`UPDATE features f SET vote_count = c.n FROM (
      SELECT feature_id, count(*)::int AS n FROM votes WHERE project_id = ${projectId} GROUP BY feature_id) c
    WHERE f.id = c.feature_id`.execute(db);
  return projectId;
}

const snapshot = () => ({
  tiers: [
    { ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 3 },
    { ref: "biz", name: "Business", mrr_cents: 19900, multiplier: 5 },
    { ref: "team", name: "Team", mrr_cents: 9900, multiplier: 2 },
  ],
});

async function median(run: () => Promise<unknown>, times = 7): Promise<number> {
  await run();
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return Math.round(samples[Math.floor(times / 2)]! * 10) / 10;
}

async function measureProject(project: ImportedProject, projectId: number, label: string): Promise<string[]> {
  const lines: string[] = [];
  for (const sort of ["mrr", "votes", "weighted", "priority"] as const) {
    const query = await median(() => listRevenueFeatures(ctx.db, projectId, sort, { page: 5, per_page: 20 }));
    const http = await median(async () => {
      const response = await ctx.get(`/api/v3/projects/${project.slug}/revenue/features?sort=${sort}&page=5`, project.secretKey);
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    });
    lines.push(`[${label}] revenue/features sort=${sort}: query ${query} ms, request ${http} ms`);
  }
  const featureId = (await ctx.db.selectFrom("features").select("id").where("project_id", "=", projectId).orderBy("id").executeTakeFirstOrThrow()).id;
  for (const query of ["?per_page=100", "?per_page=100&page=150", "?churned=true&per_page=100", `?customer_id=cus_${projectId}_300`, `?feature_id=${featureId}&per_page=100`]) {
    const http = await median(async () => {
      const response = await ctx.get(`/api/v3/projects/${project.slug}/voters${query}`, project.secretKey);
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    });
    lines.push(`[${label}] voters${query}: request ${http} ms`);
  }
  return lines;
}

describe.skipIf(!enabled)("revenue routes at size (measurement, not an assertion)", () => {
  let mostlyPaying: ImportedProject;
  let fewPaying: ImportedProject;
  let mostlyPayingId: number;
  let fewPayingId: number;

  beforeAll(async () => {
    ctx = await createTestContext();
    mostlyPaying = await ctx.importProject(snapshot());
    fewPaying = await ctx.importProject(snapshot());
    mostlyPayingId = await fill(mostlyPaying, 15);
    fewPayingId = await fill(fewPaying, 4);
    await sql`VACUUM ANALYZE votes`.execute(ctx.db);
    await sql`VACUUM ANALYZE voters`.execute(ctx.db);
  }, 900_000);
  afterAll(() => ctx?.close());

  it("prints median milliseconds per page", async () => {
    const calibration = await median(() => sql`SELECT count(*) FROM votes WHERE project_id = ${mostlyPayingId}`.execute(ctx.db));
    const lines = [`calibration: SELECT count(*) of one project's 200,000 votes: ${calibration} ms`];
    lines.push(...(await measureProject(mostlyPaying, mostlyPayingId, "75% with a tier")));
    lines.push(...(await measureProject(fewPaying, fewPayingId, "20% with a tier")));
    console.log(lines.join("\n"));
  }, 600_000);
});
