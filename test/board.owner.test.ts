/**
 * Owner board and column routes (owner-api-v3.md, Routes /boards, /columns; Rules 1 and 3):
 * happy paths, errors, and the public board document and features after each change.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, createTestContext, type ImportedProject, type Schemas, type TestContext } from "./support/harness.ts";
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

/** The public board document of `project`. */
const boardDocument = (project: ImportedProject): Promise<BoardDocument> => publicRead(ctx, project);
/** A public feature list of `p` (`query` starts with "?"). */
const featureList = (query: string): Promise<FeatureList> => publicRead(ctx, p, `/features${query}`);
/** One public feature of `p`. */
const featureOf = (id: number): Promise<FeatureAnswer> => publicRead(ctx, p, `/features/${id}`);
const boardOf = (doc: BoardDocument, slug: string) => doc.data.boards.find((b) => b.slug === slug)!;

describe("POST /admin/boards", () => {
  it("creates an empty custom board after the others; the board document shows it at once", async () => {
    await boardDocument(p);
    const made = await owner(ctx, p, "POST", "/boards", { name: "Web", slug: "web" });
    expect(made.status).toBe(201);
    expect(made.body.data).toEqual({ id: expect.any(Number), kind: "custom", name: "Web", slug: "web", columns: [] });
    const doc = await boardDocument(p);
    expect(doc.data.boards.map((b) => b.slug)).toEqual(["roadmap", "mobile", "web"]);
  });

  it("409 already_exists for a taken slug or roadmap; 422 naming the field for bad input; nothing created", async () => {
    for (const slug of ["mobile", "roadmap"]) {
      const taken = await owner(ctx, p, "POST", "/boards", { name: "X", slug });
      expect(taken.status).toBe(409);
      expect(taken.body.error.code).toBe("already_exists");
    }
    expectInvalid(await owner(ctx, p, "POST", "/boards", { name: "X", slug: "Bad Slug" }), "slug");
    expectInvalid(await owner(ctx, p, "POST", "/boards", { slug: "x" }), "name");
    expectInvalid(await owner(ctx, p, "POST", "/boards", { name: "X", slug: "x", kind: "roadmap" }), "kind");
    const doc = await boardDocument(p);
    expect(doc.data.boards.map((b) => b.slug)).toEqual(["roadmap", "mobile", "web"]);
  });

  it("the same slug is free in another project", async () => {
    expect((await owner(ctx, other, "POST", "/boards", { name: "Web", slug: "web" })).status).toBe(201);
  });
});

describe("PATCH /admin/boards/{board_id}", () => {
  it("renames the roadmap (id 0) and refuses its slug and position with 422 naming them", async () => {
    const renamed = await owner(ctx, p, "PATCH", "/boards/0", { name: "Our roadmap" });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ id: 0, kind: "roadmap", name: "Our roadmap", slug: "roadmap" });
    expect(renamed.body.data.columns.map((c: Schemas["Column"]) => c.status)).toEqual(["open", "planned", "in_progress", "done", "denied"]);
    expect(boardOf(await boardDocument(p), "roadmap").name).toBe("Our roadmap");
    expectInvalid(await owner(ctx, p, "PATCH", "/boards/0", { slug: "main" }), "slug");
    expectInvalid(await owner(ctx, p, "PATCH", "/boards/0", { name: "A", position: 3 }), "position");
    expect(boardOf(await boardDocument(p), "roadmap").name).toBe("Our roadmap");
  });

  it("changes a custom board's name, slug and position; the public features filter follows the slug", async () => {
    const mobile = idsOf(p).boards.mobile;
    const changed = await owner(ctx, p, "PATCH", `/boards/${mobile}`, { name: "Apps", slug: "apps", position: 99 });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ id: mobile, kind: "custom", name: "Apps", slug: "apps" });
    const doc = await boardDocument(p);
    expect(doc.data.boards.map((b) => b.slug)).toEqual(["roadmap", "web", "apps"]);
    const list = await featureList("?board=apps");
    expect(list.data.map((f) => f.heading)).toEqual(["Widget"]);
    expect(list.data[0]!.board).toMatchObject({ id: mobile, name: "Apps", slug: "apps" });
    expect((await ctx.get(`/api/v3/projects/${p.slug}/features?board=mobile`, p.secretKey)).status).toBe(422);
  });

  it("409 on a taken slug, 404 on an unknown or foreign board, 422 on unknown keys and bad values", async () => {
    const apps = idsOf(p).boards.mobile;
    const clash = await owner(ctx, p, "PATCH", `/boards/${apps}`, { slug: "web" });
    expect(clash.status).toBe(409);
    expect((await owner(ctx, p, "PATCH", `/boards/${idsOf(other).boards.mobile}`, { name: "Mine" })).status).toBe(404);
    expect((await owner(ctx, p, "PATCH", "/boards/999999", { name: "Mine" })).status).toBe(404);
    expectInvalid(await owner(ctx, p, "PATCH", `/boards/${apps}`, { kind: "roadmap" }), "kind");
    expectInvalid(await owner(ctx, p, "PATCH", `/boards/${apps}`, { position: -1 }), "position");
    expectInvalid(await owner(ctx, p, "PATCH", "/boards/-1", { name: "x" }), "board_id");
    expect(boardOf(await boardDocument(other), "mobile").name).toBe("Mobile");
  });
});

describe("columns", () => {
  it("adds a roadmap column (status required) and a custom column (status refused)", async () => {
    expectInvalid(await owner(ctx, p, "POST", "/boards/0/columns", { name: "Beta" }), "status");
    const apps = idsOf(p).boards.mobile;
    expectInvalid(await owner(ctx, p, "POST", `/boards/${apps}/columns`, { name: "Soon", status: "planned" }), "status");
    expectInvalid(await owner(ctx, p, "POST", "/boards/0/columns", { name: "Beta", status: "archived" }), "status");
    expectInvalid(await owner(ctx, p, "POST", "/boards/0/columns", { name: "Beta", status: "planned", color: "blue" }), "color");
    expectInvalid(await owner(ctx, p, "POST", "/boards/0/columns", { name: "Beta", status: "planned", color: "#12345" }), "color");
    expectInvalid(await owner(ctx, p, "POST", "/boards/0/columns", { name: "Beta", status: "planned", is_votable: "yes" }), "is_votable");

    const beta = await owner(ctx, p, "POST", "/boards/0/columns", {
      name: "Beta",
      status: "in_progress",
      color: "#ABC",
      is_votable: false,
    });
    expect(beta.status).toBe(201);
    expect(beta.body.data).toEqual({
      id: expect.any(Number),
      name: "Beta",
      color: "#ABC",
      position: 5,
      is_votable: false,
      status: "in_progress",
    });
    const soon = await owner(ctx, p, "POST", `/boards/${apps}/columns`, { name: "Soon", position: 0 });
    expect(soon.status).toBe(201);
    expect(soon.body.data).toMatchObject({ name: "Soon", color: null, position: 0, is_votable: true, status: null });
    const doc = await boardDocument(p);
    expect(boardOf(doc, "roadmap").columns.at(-1)).toEqual(beta.body.data);
    expect(boardOf(doc, "apps").columns.map((c) => c.name)).toEqual(["Later", "Soon", "Now"]);
    expect((await owner(ctx, p, "POST", `/boards/${idsOf(other).boards.mobile}/columns`, { name: "X" })).status).toBe(404);
  });

  it("renames a column and recolours it; public features show the new column name at once", async () => {
    const planned = idsOf(p).columns["c-planned"];
    const dark = idsOf(p).features.dark;
    await featureOf(dark);
    const changed = await owner(ctx, p, "PATCH", `/columns/${planned}`, { name: "Next", color: null });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ id: planned, name: "Next", color: null, status: "planned" });
    expect((await featureOf(dark)).data.column).toEqual({ id: planned, name: "Next", color: null });
  });

  it("a roadmap column's new status becomes its features' status; counters stay as their rows say", async () => {
    const planned = idsOf(p).columns["c-planned"];
    const dark = idsOf(p).features.dark;
    const before = (await featureOf(dark)).data;
    const changed = await owner(ctx, p, "PATCH", `/columns/${planned}`, { status: "in_progress" });
    expect(changed.body.data.status).toBe("in_progress");
    const after = (await featureOf(dark)).data;
    expect(after.status).toBe("in_progress");
    expect(after.vote_count).toBe(before.vote_count);
    const rows = await ctx.db
      .selectFrom("votes")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("feature_id", "=", dark)
      .executeTakeFirstOrThrow();
    expect(after.vote_count).toBe(Number(rows.n));
    const list = await featureList(`?column=${planned}`);
    expect(list.data.map((f) => f.status)).toEqual(["in_progress", "in_progress"]);
    // Nothing else moved: a feature of another column keeps its status.
    const pending = await ctx.db
      .selectFrom("features")
      .select("status")
      .where("id", "=", idsOf(p).features.pending)
      .executeTakeFirstOrThrow();
    expect(pending.status).toBe("open");
  });

  it("status on a custom column is 422; unknown keys 422; foreign or unknown column 404", async () => {
    const later = idsOf(p).columns["m-later"];
    expectInvalid(await owner(ctx, p, "PATCH", `/columns/${later}`, { status: "done" }), "status");
    expectInvalid(await owner(ctx, p, "PATCH", `/columns/${later}`, { board_id: 1 }), "board_id");
    expectInvalid(await owner(ctx, p, "PATCH", `/columns/${later}`, { name: "" }), "name");
    expect((await owner(ctx, p, "PATCH", `/columns/${idsOf(other).columns["m-later"]}`, { name: "Mine" })).status).toBe(404);
    expect((await owner(ctx, p, "DELETE", `/columns/${idsOf(other).columns["c-progress"]}`)).status).toBe(404);
    expect(boardOf(await boardDocument(other), "mobile").columns[0]!.name).toBe("Later");
  });

  it("a column holding features is 409 in_use; an empty one deletes and leaves the document", async () => {
    const planned = idsOf(p).columns["c-planned"];
    const inUse = await owner(ctx, p, "DELETE", `/columns/${planned}`);
    expect(inUse.status).toBe(409);
    expect(inUse.body.error.code).toBe("in_use");
    expect(inUse.body.error.message).toMatch(/2 feature/);
    const progress = idsOf(p).columns["c-progress"];
    const deleted = await owner(ctx, p, "DELETE", `/columns/${progress}`);
    expect(deleted.body).toEqual({ data: { deleted: true, id: progress }, meta: null, error: null });
    const doc = await boardDocument(p);
    expect(boardOf(doc, "roadmap").columns.map((c) => c.id)).not.toContain(progress);
    expect((await owner(ctx, p, "DELETE", `/columns/${progress}`)).status).toBe(404);
  });
});

describe("DELETE /admin/boards/{board_id}", () => {
  it("the roadmap and a board holding features are 409 in_use; an empty board goes with its columns", async () => {
    const roadmap = await owner(ctx, p, "DELETE", "/boards/0");
    expect(roadmap.status).toBe(409);
    expect(roadmap.body.error.code).toBe("in_use");
    const apps = idsOf(p).boards.mobile;
    const held = await owner(ctx, p, "DELETE", `/boards/${apps}`);
    expect(held.status).toBe(409);
    expect(held.body.error).toMatchObject({ code: "in_use" });
    expect(held.body.error.message).toMatch(/1 feature/);

    const made = await owner(ctx, p, "POST", "/boards", { name: "Temp", slug: "temp" });
    const column = await owner(ctx, p, "POST", `/boards/${made.body.data.id}/columns`, { name: "Only" });
    const gone = await owner(ctx, p, "DELETE", `/boards/${made.body.data.id}`);
    expect(gone.body).toEqual({ data: { deleted: true, id: made.body.data.id }, meta: null, error: null });
    expect(await ctx.db.selectFrom("columns").select("id").where("id", "=", column.body.data.id).executeTakeFirst()).toBeUndefined();
    const doc = await boardDocument(p);
    expect(doc.data.boards.map((b) => b.slug)).not.toContain("temp");
    expect((await owner(ctx, p, "DELETE", `/boards/${idsOf(other).boards.mobile}`)).status).toBe(404);
  });
});
