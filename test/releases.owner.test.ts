/**
 * Owner release routes (owner-api-v3.md, Routes /releases; AdminReleaseObject; Rule 4): drafts,
 * scheduled and published releases, markdown rendered at write, slugs, feature lists, and the
 * public changelog and features after each change, including a scheduled release becoming
 * public by itself (no request in between) while its answers sit in the shared read cache.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";
import { expectInvalid, idsOf, importContentProject, owner, publicRead } from "./support/owner-content.fixture.ts";

let ctx: TestContext;
let p: ImportedProject;
let other: ImportedProject;
const MINUTE = 60_000;
const at = (minutes: number) => new Date(Date.now() + minutes * MINUTE).toISOString();

beforeAll(async () => {
  ctx = await createTestContext({ READ_CACHE_SECONDS: "600", PROJECT_CACHE_SECONDS: "600" });
  p = await importContentProject(ctx, {
    releases: [
      { ref: "r-old", name: "1.0", slug: "1-0", published_at: at(-60 * 24), features: [{ feature: "export", changelog_type: "fix" }] },
    ],
  });
  other = await importContentProject(ctx);
});
afterAll(async () => {
  await ctx.close();
});

type FeatureList = Answer<"/api/v3/projects/{slug}/features", "get">;
type FeatureAnswer = Answer<"/api/v3/projects/{slug}/features/{id}", "get">;
type AdminRelease = Answer<"/api/v3/projects/{slug}/admin/releases", "get">["data"][number];
type Changelog = Answer<"/api/v3/projects/{slug}/changelog", "get">;
/** A public feature list of `project` (`query` starts with "?"). */
const featureList = (query: string, project = p): Promise<FeatureList> => publicRead(ctx, project, `/features${query}`);
/** One public feature of `project`. */
const featureOf = (id: number, project = p): Promise<FeatureAnswer> => publicRead(ctx, project, `/features/${id}`);
/** The public changelog of `project`. */
const changelog = (project = p): Promise<Changelog> => publicRead(ctx, project, "/changelog");

const changelogNames = async () => (await changelog()).data.map((r) => r.name);

describe("POST /admin/releases", () => {
  it("a draft: slug from the name, body rendered and sanitized, every feature listed, not public", async () => {
    const made = await owner(ctx, p, "POST", "/releases", {
      name: "Version 2.0 Beta!",
      body: "## New\n<script>alert(1)</script>\n[x](javascript:alert(1))",
      features: [{ feature_id: idsOf(p).features.pending, changelog_type: "improvement" }, { feature_id: idsOf(p).features.dark }],
    });
    expect(made.status).toBe(201);
    const r = made.body.data;
    expect(r).toMatchObject({
      name: "Version 2.0 Beta!",
      slug: "version-2-0-beta",
      status: "draft",
      published_at: null,
      is_featured: false,
      view_count: 0,
    });
    expect(r.body_html).toContain("<h2>New</h2>");
    expect(r.body_html).not.toContain("<script");
    expect(r.body_html).not.toContain("javascript:");
    // Every feature, the one awaiting approval too, in the given order.
    expect(r.features).toEqual([
      { id: idsOf(p).features.pending, heading: "Awaiting review", status: "open", changelog_type: "improvement" },
      { id: idsOf(p).features.dark, heading: "Dark mode", status: "planned", changelog_type: "new" },
    ]);
    expect(await changelogNames()).toEqual(["1.0"]);
    expect((await ctx.get(`/api/v3/projects/${p.slug}/changelog/${r.id}`, p.secretKey)).status).toBe(404);
  });

  it("published now: on the public changelog and on its features at once (release and changelog_type)", async () => {
    const dark = idsOf(p).features.dark;
    await changelogNames();
    expect((await featureOf(dark)).data.release).toBeNull();
    const made = await owner(ctx, p, "POST", "/releases", {
      name: "1.1",
      is_featured: true,
      published_at: at(-1),
      features: [{ feature_id: dark, changelog_type: "security" }],
    });
    expect(made.body.data.status).toBe("published");
    expect(await changelogNames()).toEqual(["1.1", "1.0"]);
    const feature = (await featureOf(dark)).data;
    expect(feature.release).toEqual({ id: made.body.data.id, name: "1.1" });
    expect(feature.changelog_type).toBe("security");
  });

  it("409 already_exists for a taken slug (given or derived); 422 naming features[i].feature_id; nothing created", async () => {
    const before = (await owner(ctx, p, "GET", "/releases")).body.meta.total;
    const taken = await owner(ctx, p, "POST", "/releases", { name: "Other", slug: "1-0" });
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe("already_exists");
    expect((await owner(ctx, p, "POST", "/releases", { name: "1.0" })).status).toBe(409);
    const dark = idsOf(p).features.dark;
    expectInvalid(
      await owner(ctx, p, "POST", "/releases", { name: "X", features: [{ feature_id: dark }, { feature_id: idsOf(other).features.dark }] }),
      "features[1].feature_id",
    );
    expectInvalid(await owner(ctx, p, "POST", "/releases", { name: "X", features: [{ feature_id: 999999999 }] }), "features[0].feature_id");
    expectInvalid(
      await owner(ctx, p, "POST", "/releases", { name: "X", features: [{ feature_id: dark }, { feature_id: dark }] }),
      "features[1].feature_id",
    );
    expectInvalid(
      await owner(ctx, p, "POST", "/releases", { name: "X", features: [{ feature_id: dark, changelog_type: "big" }] }),
      "features[0].changelog_type",
    );
    expectInvalid(await owner(ctx, p, "POST", "/releases", { name: "X", slug: "Has Spaces" }), "slug");
    expectInvalid(await owner(ctx, p, "POST", "/releases", { name: "X", published_at: "soon" }), "published_at");
    expectInvalid(await owner(ctx, p, "POST", "/releases", { body: "x" }), "name");
    expectInvalid(await owner(ctx, p, "POST", "/releases", { name: "X", view_count: 5 }), "view_count");
    expect((await owner(ctx, p, "GET", "/releases")).body.meta.total).toBe(before);
  });

  it("a replayed POST with one Idempotency-Key creates one release", async () => {
    const headers = { "Idempotency-Key": "rel-once" };
    const first = await owner(ctx, p, "POST", "/releases", { name: "Once" }, headers);
    const again = await owner(ctx, p, "POST", "/releases", { name: "Once" }, headers);
    expect(first.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const names = (await owner(ctx, p, "GET", "/releases?per_page=100")).body.data.map((r: AdminRelease) => r.name);
    expect(names.filter((n: string) => n === "Once")).toHaveLength(1);
  });
});

describe("GET, PATCH, DELETE /admin/releases/{id}", () => {
  it("lists every release newest first with status; GET one; 404 for another project's", async () => {
    const list = await owner(ctx, p, "GET", "/releases");
    expect(list.status).toBe(200);
    expect(list.body.data.map((r: AdminRelease) => [r.name, r.status])).toEqual([
      ["Once", "draft"],
      ["1.1", "published"],
      ["Version 2.0 Beta!", "draft"],
      ["1.0", "published"],
    ]);
    const old = idsOf(p).releases["r-old"];
    expect((await owner(ctx, p, "GET", `/releases/${old}`)).body.data.features).toEqual([
      { id: idsOf(p).features.export, heading: "CSV export", status: "planned", changelog_type: "fix" },
    ]);
    expect((await owner(ctx, p, "GET", `/releases/${idsOf(other).releases?.["r-old"] ?? 999999999}`)).status).toBe(404);
  });

  it("PATCH renders a new body, replaces features, unpublishes and re-slugs; the public side follows", async () => {
    const old = idsOf(p).releases["r-old"];
    const exportId = idsOf(p).features.export;
    expect((await featureOf(exportId)).data.release?.name).toBe("1.0");
    const patched = await owner(ctx, p, "PATCH", `/releases/${old}`, { body: "**bold**", slug: "one-oh", features: [] });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ slug: "one-oh", body: "**bold**", features: [], status: "published" });
    expect(patched.body.data.body_html).toContain("<strong>bold</strong>");
    expect((await featureOf(exportId)).data.release).toBeNull();
    const drafted = await owner(ctx, p, "PATCH", `/releases/${old}`, { published_at: null });
    expect(drafted.body.data.status).toBe("draft");
    expect(await changelogNames()).toEqual(["1.1"]);
    const cleared = await owner(ctx, p, "PATCH", `/releases/${old}`, { body: null });
    expect(cleared.body.data).toMatchObject({ body: null, body_html: null });
    expect((await owner(ctx, p, "PATCH", `/releases/${old}`, { slug: "version-2-0-beta" })).status).toBe(409);
    expectInvalid(await owner(ctx, p, "PATCH", `/releases/${old}`, { name: null }), "name");
    expectInvalid(await owner(ctx, p, "PATCH", `/releases/${old}`, { status: "published" }), "status");
    expect((await owner(ctx, p, "PATCH", `/releases/${old}`, { name: "1.0" })).body.data.slug).toBe("one-oh");
  });

  it("DELETE removes the release and its links, public at once; again is 404", async () => {
    const list = (await owner(ctx, p, "GET", "/releases")).body.data;
    const published = list.find((r: AdminRelease) => r.name === "1.1");
    const dark = idsOf(p).features.dark;
    const gone = await owner(ctx, p, "DELETE", `/releases/${published.id}`);
    expect(gone.body).toEqual({ data: { deleted: true, id: published.id }, meta: null, error: null });
    expect(await changelogNames()).toEqual([]);
    expect((await featureOf(dark)).data.release).toBeNull();
    expect((await owner(ctx, p, "DELETE", `/releases/${published.id}`)).status).toBe(404);
  });
});

describe("scheduled publication (Rule 4)", () => {
  it("a scheduled release becomes public at its time with no write, though the old answers are cached", async () => {
    const p = await importContentProject(ctx);
    const changelogNames = async () => (await changelog(p)).data.map((r) => r.name);
    const widget = idsOf(p).features.widget;
    const made = await owner(ctx, p, "POST", "/releases", {
      name: "Scheduled",
      published_at: at(10),
      features: [{ feature_id: widget, changelog_type: "new" }],
    });
    expect(made.body.data.status).toBe("scheduled");
    // Read (and so cache) the answers the publication changes.
    expect(await changelogNames()).toEqual([]);
    expect((await featureOf(widget, p)).data.release).toBeNull();
    const list = await featureList("?board=mobile", p);
    expect(list.data[0]!.release).toBeNull();
    expect(await changelogNames()).toEqual([]);

    const realNow = ctx.deps.now;
    ctx.deps.now = () => new Date(Date.now() + 11 * MINUTE);
    try {
      expect(await changelogNames()).toEqual(["Scheduled"]);
      expect((await featureOf(widget, p)).data.release).toEqual({ id: made.body.data.id, name: "Scheduled" });
      expect((await featureList("?board=mobile", p)).data[0]!.changelog_type).toBe("new");
      expect((await owner(ctx, p, "GET", `/releases/${made.body.data.id}`)).body.data.status).toBe("published");
    } finally {
      ctx.deps.now = realNow;
    }
  });
});
