/**
 * The listing's page as Postgres writes it (src/routes/features/features.json.ts,
 * listFeaturePage) against the mappers (listFeatures rows -> toFeatureObject -> JSON.stringify):
 * byte for byte the same text, ids, last item and total, for every sort, the filters, later and
 * trimmed pages, a voter's has_voted, and settings that hide counters or weight scores; on a
 * project whose strings carry quotes, backslashes, control characters and non-ASCII text and
 * whose timestamps carry microseconds. And the HTTP answer is that text in its envelope.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProjectSettings } from "../db/schema.ts";
import { page } from "../src/lib/http/envelope.ts";
import { pageMeta } from "../src/lib/http/pagination.ts";
import { toFeatureObject } from "../src/routes/features/features.mapper.ts";
import { type FeatureListFilter, listFeaturePage, listFeatures } from "../src/routes/features/features.repository.ts";
import type { FeatureSort } from "../src/routes/features/features.schemas.ts";
import {
  buildSnapshot,
  createTestContext,
  type ImportedProject,
  type SnapshotParts,
  type TestContext,
  uniqueSlug,
} from "./support/harness.ts";

const ODD = 'quote " backslash \\ slash / newline \n tab \t bell \u0007 unit \u001f del \u007f é 日本 🎉 \u2028';

function variedSnapshot(settings: Record<string, unknown>): SnapshotParts {
  const roadmap = buildSnapshot().boards[0];
  const slug = uniqueSlug("json");
  const features = Array.from({ length: 14 }, (_, i) => ({
    ref: `f${i}`,
    board: i % 5 === 4 ? "mobile" : "roadmap",
    column: i % 5 === 4 ? "m-later" : i === 6 ? "c-denied" : (["c-open", "c-planned", "c-progress", "c-done"][i % 5] ?? "c-open"),
    heading: i % 3 === 0 ? `${ODD} ${i}` : `Feature ${i}`,
    ...(i % 2 === 0 ? { description: `${ODD} description ${i}` } : {}),
    tags: i % 4 === 0 ? ["t-odd", "t-ui"] : i % 4 === 1 ? ["t-api"] : [],
    position: i,
    is_pinned: i === 7,
    ...(i % 3 === 1 ? { progress: i * 7, view_count: i * 11, developer_response: `${ODD} answer`, response_is_denial: i % 2 === 0 } : {}),
    ...(i % 4 === 2 ? { start_date: "2026-03-05T00:00:00Z", target_date: "2026-12-01T12:34:56.789Z" } : {}),
    ...(i === 3 ? { linked_feature: "f1" } : {}),
    created_at: `2026-0${1 + (i % 9)}-1${i % 10}T10:00:00Z`,
  }));
  features.push(
    {
      ref: "arch",
      board: "roadmap",
      column: null,
      status: "archived",
      heading: "Archived one",
      created_at: "2026-05-01T10:00:00Z",
    } as never,
    {
      ref: "pend",
      board: "roadmap",
      column: "c-open",
      heading: "Pending",
      is_approved: false,
      author: "dan",
      created_at: "2026-06-01T10:00:00Z",
    } as never,
  );
  return {
    project: { slug, settings },
    tags: [
      { ref: "t-odd", name: `Ödd "tag" \\ ${ODD}` },
      { ref: "t-ui", name: "ui" },
      { ref: "t-api", name: "API" },
    ],
    tiers: [{ ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 3 }],
    boards: [
      roadmap,
      {
        ref: "mobile",
        kind: "custom",
        name: `Mobile ${ODD}`,
        slug: "mobile",
        columns: [{ ref: "m-later", name: `Later ${ODD}`, color: "#ff0000", position: 0, is_votable: true }],
      },
    ],
    voters: [
      { ref: "ada", anon_token: `anon-ada-${slug}`, tier: "pro" },
      { ref: "bob", anon_token: `anon-bob-${slug}` },
      { ref: "dan", anon_token: `anon-dan-${slug}` },
    ],
    features,
    votes: [
      { voter: "ada", feature: "f0", created_at: "2026-01-02T00:00:00Z" },
      { voter: "bob", feature: "f0", created_at: "2026-01-03T00:00:00Z" },
      { voter: "bob", feature: "f2", created_at: "2026-06-01T00:00:00Z" },
      { voter: "ada", feature: "f5", created_at: "2026-11-20T00:00:00Z" },
      { voter: "dan", feature: "f9", created_at: "2026-11-21T00:00:00Z" },
      { voter: "ada", feature: "f9", created_at: "2026-11-22T00:00:00Z" },
    ],
    comments: [{ ref: "k1", feature: "f0", voter: "bob", content: "Yes" }],
    releases: [
      { ref: "r0", name: `0.9 ${ODD}`, published_at: "2026-09-01T00:00:00Z", features: [{ feature: "f1", changelog_type: "new" }] },
      { ref: "r1", name: "draft", published_at: null, features: [{ feature: "f2", changelog_type: "fix" }] },
    ],
  };
}

let ctx: TestContext;
const projects: { name: string; project: ImportedProject; id: number; settings: ProjectSettings; voterId: number }[] = [];

beforeAll(async () => {
  ctx = await createTestContext();
  const variants: [string, Record<string, unknown>][] = [
    ["defaults", {}],
    ["weighted", { score_is_weighted: true }],
    [
      "hidden",
      { show_votes: false, show_comments: false, show_views: false, show_progress: false, show_denied: false, show_archived: true },
    ],
  ];
  for (const [name, settings] of variants) {
    const project = await ctx.importProject(variedSnapshot(settings));
    const row = await ctx.db.selectFrom("projects").select(["id", "settings"]).where("slug", "=", project.slug).executeTakeFirstOrThrow();
    // Timestamps with microseconds, as Postgres stores now(): the text must truncate them as a Date does.
    await sql`UPDATE features SET created_at = created_at + (id % 997) * interval '1.234567 ms',
      updated_at = updated_at + (id % 991) * interval '0.999999 ms',
      start_date = start_date + interval '0.000999 s' WHERE project_id = ${row.id}`.execute(ctx.db);
    const voter = await ctx.db
      .selectFrom("voters")
      .select("id")
      .where("project_id", "=", row.id)
      .where("anon_token_hash", "is not", null)
      .orderBy("id")
      .executeTakeFirstOrThrow();
    projects.push({ name, project, id: row.id, settings: row.settings as ProjectSettings, voterId: voter.id });
  }
});
afterAll(() => ctx.close());

const SORTS: FeatureSort[] = ["top", "votes", "trending", "new", "oldest", "comments", "board"];

/** Compares listFeaturePage with the mappers for one listing; throws on the first difference. */
async function compare(
  project: { id: number; settings: ProjectSettings },
  filter: FeatureListFilter,
  options: { sort: FeatureSort; page: { page: number; per_page: number }; voterId: number | null; knownTotal?: number },
): Promise<void> {
  const all = { ...options, now: new Date("2026-11-25T00:00:00Z") };
  const rows = await listFeatures(ctx.db, project, filter, all);
  const json = await listFeaturePage(ctx.db, project, filter, all);
  const where = JSON.stringify({ filter, ...options });
  expect(json.data, where).toBe(JSON.stringify(rows.rows.map((row) => toFeatureObject(row, project.settings))));
  expect(json.ids, where).toEqual(rows.rows.map((row) => row.id));
  expect(json.total, where).toBe(rows.total);
  const last = rows.rows.at(-1);
  expect(json.last, where).toEqual(
    last
      ? {
          id: last.id,
          vote_count: Number(last.vote_count),
          weighted_score: Number(last.weighted_score),
          trending_score: last.trending_score === null ? null : Number(last.trending_score),
        }
      : null,
  );
}

describe("listFeaturePage writes what the mappers write", () => {
  for (const name of ["defaults", "weighted", "hidden"]) {
    it(`for every sort and filter, later, trimmed and empty pages, a voter, a known total: ${name}`, async () => {
      const { id, settings, voterId } = projects.find((p) => p.name === name)!;
      const project = { id, settings };
      const tag = await ctx.db
        .selectFrom("tags")
        .select("id")
        .where("project_id", "=", id)
        .where("name", "=", "ui")
        .executeTakeFirstOrThrow();
      const filters: FeatureListFilter[] = [
        { boardId: null, column: null },
        { boardId: null, column: null, q: "feature" },
        { boardId: null, column: null, tagIds: [tag.id] },
        { boardId: null, column: null, statuses: ["open", "planned"] },
        { boardId: null, column: null, q: "nothing matches this" },
      ];
      const first = { page: 1, per_page: 20 };
      for (const sort of SORTS) {
        for (const filter of filters) {
          await compare(project, filter, { sort, page: first, voterId: null });
          await compare(project, filter, { sort, page: { page: 2, per_page: 4 }, voterId: null });
        }
        const all = filters[0]!;
        await compare(project, all, { sort, page: first, voterId });
        await compare(project, all, { sort, page: { page: 1, per_page: 5 }, voterId: null });
        await compare(project, all, { sort, page: { page: 4, per_page: 5 }, voterId: null });
        await compare(project, all, { sort, page: first, voterId: null, knownTotal: 3 });
      }
    });
  }

  it("answers GET features with that text in the envelope JSON.stringify writes", async () => {
    for (const { project, id, settings } of projects) {
      for (const query of ["?sort=top", "?sort=trending&per_page=3&page=2", "?sort=new&q=feature"]) {
        const response = await ctx.get(`/api/v3/projects/${project.slug}/features${query}`, project.secretKey);
        expect(response.status).toBe(200);
        expect(response.headers.get("Content-Type")).toBe("application/json");
        const params = new URLSearchParams(query.slice(1));
        const paging = { page: Number(params.get("page") ?? 1), per_page: Number(params.get("per_page") ?? 20) };
        const filter: FeatureListFilter = { boardId: null, column: null, q: params.get("q") ?? undefined };
        const roadmap = await ctx.db
          .selectFrom("boards")
          .select("id")
          .where("project_id", "=", id)
          .where("kind", "=", "roadmap")
          .executeTakeFirstOrThrow();
        filter.boardId = roadmap.id;
        const rows = await listFeatures(ctx.db, { id, settings }, filter, {
          sort: (params.get("sort") ?? "top") as FeatureSort,
          page: paging,
          voterId: null,
          now: ctx.deps.now(),
        });
        const expected = JSON.stringify(
          page(
            rows.rows.map((row) => toFeatureObject(row, settings)),
            pageMeta(paging, rows.total),
          ),
        );
        expect(await response.text()).toBe(expected);
      }
    }
  });
});
