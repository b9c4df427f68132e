/** GET /projects/{slug}/changelog and /changelog/{id}: ReleaseObject, ordering, drafts, paging. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Answer,
  body,
  createTestContext,
  type ErrorAnswer,
  type Ids,
  type ImportedProject,
  type TestContext,
} from "./support/harness.ts";

type Changelog = Answer<"/api/v3/projects/{slug}/changelog", "get">;
type Release = Answer<"/api/v3/projects/{slug}/changelog/{id}", "get">;

let ctx: TestContext;
const idsOf = (p: ImportedProject): Ids => p.ids.ids ?? p.ids;
const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

const features = [
  { ref: "f-a", board: "roadmap", column: "c-done", heading: "Alpha" },
  { ref: "f-b", board: "roadmap", column: "c-done", heading: "Beta" },
  { ref: "f-hidden", board: "roadmap", column: "c-open", heading: "Awaiting review", is_approved: false },
  { ref: "f-denied", board: "roadmap", column: "c-denied", heading: "Declined one" },
];

function releases() {
  return [
    { ref: "old", name: "1.0", slug: "1-0", body: "First", published_at: ago(30), view_count: 5, features: [] },
    {
      ref: "new",
      name: "1.2",
      body: "## News\n\n<script>alert(1)</script>\n\n[click](javascript:alert(1)) [ok](https://ok.example)",
      published_at: ago(1),
      view_count: 12,
      features: [
        { feature: "f-b", changelog_type: "fix" },
        { feature: "f-hidden", changelog_type: "new" },
        { feature: "f-a", changelog_type: "new" },
        { feature: "f-denied", changelog_type: "breaking_change" },
      ],
    },
    {
      ref: "feat",
      name: "0.9",
      slug: "zero-nine",
      body: null,
      is_featured: true,
      published_at: ago(60),
      features: [{ feature: "f-a", changelog_type: "improvement" }],
    },
    { ref: "mid", name: "1.1", slug: "1-1", body: "Mid", published_at: ago(10), features: [] },
    { ref: "draft", name: "2.0", slug: "2-0", body: "Soon", published_at: null, features: [] },
    { ref: "later", name: "3.0", slug: "3-0", body: "Scheduled", published_at: new Date(Date.now() + DAY).toISOString(), features: [] },
  ];
}

let p: ImportedProject;
beforeAll(async () => {
  p = await ctx.importProject({ features, releases: releases() });
});

describe("changelog list", () => {
  it("lists published releases only: featured first, then newest, with full ReleaseObjects", async () => {
    const response = await ctx.get(`/api/v3/projects/${p.slug}/changelog`, p.secretKey);
    expect(response.status).toBe(200);
    const doc = await body<Changelog>(response);
    expect(doc.error).toBeNull();
    expect(doc.meta).toEqual({ page: 1, per_page: 20, total: 4, total_pages: 1, has_more: false });
    const ids = idsOf(p).releases;
    expect(doc.data.map((r) => r.id)).toEqual([ids.feat, ids.new, ids.mid, ids.old]);
    const featured = doc.data[0]!;
    expect(featured).toEqual({
      id: ids.feat,
      name: "0.9",
      slug: "zero-nine",
      body: null,
      body_html: null,
      is_featured: true,
      published_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      view_count: 0,
      features: [{ id: idsOf(p).features["f-a"], heading: "Alpha", status: "done", changelog_type: "improvement" }],
    });
    const latest = doc.data[1]!;
    expect(Object.keys(latest).sort()).toEqual([
      "body",
      "body_html",
      "features",
      "id",
      "is_featured",
      "name",
      "published_at",
      "slug",
      "view_count",
    ]);
    expect(latest.view_count).toBe(12);
    expect(latest.is_featured).toBe(false);
    // In release order, without the feature awaiting review; denied is shown while show_denied.
    expect(latest.features).toEqual([
      { id: idsOf(p).features["f-b"], heading: "Beta", status: "done", changelog_type: "fix" },
      { id: idsOf(p).features["f-a"], heading: "Alpha", status: "done", changelog_type: "new" },
      { id: idsOf(p).features["f-denied"], heading: "Declined one", status: "denied", changelog_type: "breaking_change" },
    ]);
    expect(doc.data[3]!.features).toEqual([]);
  });

  it("renders body_html safely: raw HTML escaped, javascript: links blanked", async () => {
    const response = await ctx.get(`/api/v3/projects/${p.slug}/changelog/${idsOf(p).releases.new}`, p.secretKey);
    const { data } = await body<Release>(response);
    expect(data.body).toContain("<script>");
    expect(data.body_html).toContain("<h2");
    expect(data.body_html).not.toContain("<script");
    expect(data.body_html).toContain("&lt;script&gt;");
    expect(data.body_html).not.toMatch(/javascript:/i);
    expect(data.body_html).toContain('href="https://ok.example"');
  });

  it("pages with meta arithmetic and keeps the order across pages", async () => {
    const first = await body<Changelog>(await ctx.get(`/api/v3/projects/${p.slug}/changelog?per_page=3`, p.secretKey));
    expect(first.meta).toEqual({ page: 1, per_page: 3, total: 4, total_pages: 2, has_more: true });
    expect(first.data).toHaveLength(3);
    const second = await body<Changelog>(await ctx.get(`/api/v3/projects/${p.slug}/changelog?per_page=3&page=2`, p.embedKey));
    expect(second.meta).toEqual({ page: 2, per_page: 3, total: 4, total_pages: 2, has_more: false });
    expect(second.data.map((r) => r.id)).toEqual([idsOf(p).releases.old]);
    const beyond = await body<Changelog>(await ctx.get(`/api/v3/projects/${p.slug}/changelog?page=9`, p.secretKey));
    expect(beyond.data).toEqual([]);
    expect(beyond.meta).toEqual({ page: 9, per_page: 20, total: 4, total_pages: 1, has_more: false });
  });

  it("answers 422 naming page or per_page when out of bounds", async () => {
    for (const [query, field] of [
      ["page=0", "page"],
      ["per_page=101", "per_page"],
      ["per_page=0", "per_page"],
      ["page=x", "page"],
    ]) {
      const response = await ctx.get(`/api/v3/projects/${p.slug}/changelog?${query}`, p.secretKey);
      expect(response.status).toBe(422);
      expect((await body<ErrorAnswer>(response)).error).toMatchObject({ code: "validation_failed", field });
    }
  });

  it("nulls view_count and drops hidden features under show_views / show_denied false", async () => {
    const q = await ctx.importProject({
      project: { settings: { show_views: false, show_denied: false } },
      features,
      releases: releases(),
    });
    const { data } = await body<Changelog>(await ctx.get(`/api/v3/projects/${q.slug}/changelog`, q.secretKey));
    expect(data.every((r) => r.view_count === null)).toBe(true);
    const latest = data.find((r) => r.name === "1.2")!;
    expect(latest.features.map((f) => f.heading)).toEqual(["Beta", "Alpha"]);
  });

  it("answers an empty list for a project without releases", async () => {
    const q = await ctx.importProject({});
    const doc = await body<Changelog>(await ctx.get(`/api/v3/projects/${q.slug}/changelog`, q.secretKey));
    expect(doc).toEqual({ data: [], meta: { page: 1, per_page: 20, total: 0, total_pages: 0, has_more: false }, error: null });
  });
});

describe("changelog release", () => {
  it("returns one published release", async () => {
    const ids = idsOf(p).releases;
    const response = await ctx.get(`/api/v3/projects/${p.slug}/changelog/${ids.mid}`, p.secretKey);
    expect(response.status).toBe(200);
    expect(response.headers.get("ETag")).toBeTruthy();
    expect(await body<Release>(response)).toEqual({
      data: {
        id: ids.mid,
        name: "1.1",
        slug: "1-1",
        body: "Mid",
        body_html: "<p>Mid</p>\n",
        is_featured: false,
        published_at: expect.any(String),
        view_count: 0,
        features: [],
      },
      meta: null,
      error: null,
    });
  });

  it("answers 404 for a draft, a scheduled release, another project's release and an unknown id", async () => {
    const other = await ctx.importProject({ releases: [{ ref: "x", name: "X", published_at: ago(2), features: [] }] });
    const ids = idsOf(p).releases;
    for (const id of [ids.draft, ids.later, idsOf(other).releases.x, 99_999_999]) {
      const response = await ctx.get(`/api/v3/projects/${p.slug}/changelog/${id}`, p.secretKey);
      expect(response.status).toBe(404);
      expect((await body<ErrorAnswer>(response)).error).toMatchObject({ code: "not_found", field: null });
    }
  });

  it("answers 422 field id for a non-numeric id", async () => {
    const response = await ctx.get(`/api/v3/projects/${p.slug}/changelog/abc`, p.secretKey);
    expect(response.status).toBe(422);
    expect((await body<ErrorAnswer>(response)).error).toMatchObject({ code: "validation_failed", field: "id" });
  });

  it("answers key_wrong_project with another project's key", async () => {
    const other = await ctx.importProject({});
    const response = await ctx.get(`/api/v3/projects/${p.slug}/changelog`, other.secretKey);
    expect(response.status).toBe(403);
    expect((await body<ErrorAnswer>(response)).error.code).toBe("key_wrong_project");
  });
});
