/** Owner tag routes (owner-api-v3.md, Routes /tags; TagObject): happy paths, errors, public effect. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";
import { expectInvalid, idsOf, importContentProject, owner, publicRead } from "./support/owner-content.fixture.ts";

let ctx: TestContext;
let p: ImportedProject;
let other: ImportedProject;

beforeAll(async () => {
  ctx = await createTestContext();
  p = await importContentProject(ctx);
  other = await importContentProject(ctx);
});
afterAll(async () => {
  await ctx.close();
});

type BoardDocument = Answer<"/api/v3/projects/{slug}", "get">;
type FeatureList = Answer<"/api/v3/projects/{slug}/features", "get">;
type FeatureAnswer = Answer<"/api/v3/projects/{slug}/features/{id}", "get">;
type AdminTag = Answer<"/api/v3/projects/{slug}/admin/tags", "get">["data"][number];
/** The public board document of `p`. */
const boardDocument = (): Promise<BoardDocument> => publicRead(ctx, p);
/** A public feature list of `p` (`query` starts with "?"). */
const featureList = (query: string): Promise<FeatureList> => publicRead(ctx, p, `/features${query}`);
/** One public feature of `p`. */
const featureOf = (id: number): Promise<FeatureAnswer> => publicRead(ctx, p, `/features/${id}`);

describe("GET /admin/tags", () => {
  it("lists every tag by name with its feature count and meta", async () => {
    const result = await owner(ctx, p, "GET", "/tags");
    expect(result.status).toBe(200);
    expect(result.headers.get("cache-control")).toBe("private, max-age=0");
    const ids = idsOf(p).tags;
    expect(result.body.data).toEqual([
      { id: ids["t-api"], name: "API", feature_count: 1 },
      { id: ids["t-empty"], name: "Empty", feature_count: 0 },
      { id: ids["t-ui"], name: "UI", feature_count: 2 },
    ]);
    expect(result.body.meta).toEqual({ page: 1, per_page: 20, total: 3, total_pages: 1, has_more: false });
    const second = await owner(ctx, p, "GET", "/tags?per_page=2&page=2");
    expect(second.body.data.map((t: AdminTag) => t.name)).toEqual(["UI"]);
    const etag = result.headers.get("etag")!;
    expect((await owner(ctx, p, "GET", "/tags", undefined, { "If-None-Match": etag })).status).toBe(304);
  });
});

describe("POST /admin/tags", () => {
  it("creates a tag (201) that the board document lists at once", async () => {
    await boardDocument(); // warm the shared read cache
    const created = await owner(ctx, p, "POST", "/tags", { name: "  Mobile  " });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ data: { id: expect.any(Number), name: "Mobile", feature_count: 0 }, meta: null, error: null });
    const doc = await boardDocument();
    expect(doc.data.tags).toContainEqual({ id: created.body.data.id, name: "Mobile" });
  });

  it("refuses a duplicate name ignoring case with 409 already_exists and creates nothing", async () => {
    const before = (await owner(ctx, p, "GET", "/tags")).body.meta.total;
    const dup = await owner(ctx, p, "POST", "/tags", { name: "ui" });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe("already_exists");
    expect((await owner(ctx, p, "GET", "/tags")).body.meta.total).toBe(before);
  });

  it("allows the same name in another project", async () => {
    const made = await owner(ctx, other, "POST", "/tags", { name: "Mobile" });
    expect(made.status).toBe(201);
  });

  it("refuses blank, missing, too long, non-string names and unknown keys with 422 naming the field", async () => {
    expectInvalid(await owner(ctx, p, "POST", "/tags", { name: "   " }), "name");
    expectInvalid(await owner(ctx, p, "POST", "/tags", {}), "name");
    expectInvalid(await owner(ctx, p, "POST", "/tags", { name: "x".repeat(101) }), "name");
    expectInvalid(await owner(ctx, p, "POST", "/tags", { name: 5 }), "name");
    expectInvalid(await owner(ctx, p, "POST", "/tags", { name: "Fine", feature_count: 9 }), "feature_count");
  });

  it("a replayed POST with the same Idempotency-Key creates one tag", async () => {
    const headers = { "Idempotency-Key": "tag-replay-1" };
    const first = await owner(ctx, p, "POST", "/tags", { name: "Replayed" }, headers);
    const second = await owner(ctx, p, "POST", "/tags", { name: "Replayed" }, headers);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replay")).toBe("true");
    expect(second.body).toEqual(first.body);
    const names = (await owner(ctx, p, "GET", "/tags?per_page=100")).body.data.map((t: AdminTag) => t.name);
    expect(names.filter((n: string) => n === "Replayed")).toHaveLength(1);
  });

  it("concurrent POSTs of one name create exactly one tag", async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => owner(ctx, p, "POST", "/tags", { name: "Race" })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  });
});

describe("PATCH /admin/tags/{tag_id}", () => {
  it("renames a tag; features on the public list show the new name at once", async () => {
    const id = idsOf(p).tags["t-api"];
    const dark = idsOf(p).features.dark;
    await featureOf(dark);
    const renamed = await owner(ctx, p, "PATCH", `/tags/${id}`, { name: "Public API" });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toEqual({ id, name: "Public API", feature_count: 1 });
    const feature = await featureOf(dark);
    expect(feature.data.tags).toContainEqual({ id, name: "Public API" });
    // Renaming to its own name in another case is allowed; an empty patch changes nothing.
    expect((await owner(ctx, p, "PATCH", `/tags/${id}`, { name: "PUBLIC API" })).status).toBe(200);
    expect((await owner(ctx, p, "PATCH", `/tags/${id}`, {})).body.data.name).toBe("PUBLIC API");
  });

  it("409 on another tag's name, 404 on unknown or another project's tag, 422 on bad input", async () => {
    const ui = idsOf(p).tags["t-ui"];
    const empty = idsOf(p).tags["t-empty"];
    const clash = await owner(ctx, p, "PATCH", `/tags/${empty}`, { name: "Ui" });
    expect(clash.status).toBe(409);
    expect(clash.body.error.code).toBe("already_exists");
    const foreign = await owner(ctx, p, "PATCH", `/tags/${idsOf(other).tags["t-ui"]}`, { name: "Stolen" });
    expect(foreign.status).toBe(404);
    expect((await owner(ctx, other, "GET", "/tags")).body.data.map((t: AdminTag) => t.name)).toContain("UI");
    expect((await owner(ctx, p, "PATCH", "/tags/999999999", { name: "Nope" })).status).toBe(404);
    expectInvalid(await owner(ctx, p, "PATCH", `/tags/${ui}`, { name: null }), "name");
    expectInvalid(await owner(ctx, p, "PATCH", `/tags/${ui}`, { id: 3 }), "id");
    expectInvalid(await owner(ctx, p, "PATCH", "/tags/abc", { name: "x" }), "tag_id");
  });
});

describe("DELETE /admin/tags/{tag_id}", () => {
  it("deletes the tag and takes it off its features, publicly at once", async () => {
    const ui = idsOf(p).tags["t-ui"];
    const dark = idsOf(p).features.dark;
    const before = await featureList(`?tag=${ui}`);
    expect(before.data.length).toBe(2);
    const deleted = await owner(ctx, p, "DELETE", `/tags/${ui}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ data: { deleted: true, id: ui }, meta: null, error: null });
    expect((await featureList(`?tag=${ui}`)).data).toEqual([]);
    expect((await featureOf(dark)).data.tags.map((t) => t.id)).not.toContain(ui);
    expect((await boardDocument()).data.tags.map((t) => t.id)).not.toContain(ui);
    const again = await owner(ctx, p, "DELETE", `/tags/${ui}`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("not_found");
  });

  it("another project's tag answers 404 and stays", async () => {
    const foreign = idsOf(other).tags["t-api"];
    expect((await owner(ctx, p, "DELETE", `/tags/${foreign}`)).status).toBe(404);
    expect((await owner(ctx, other, "GET", "/tags")).body.data.map((t: AdminTag) => t.id)).toContain(foreign);
  });
});
