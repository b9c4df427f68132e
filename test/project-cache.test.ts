/**
 * The in-process project cache (src/lib/project-cache.ts) never serves what an import or a key
 * regeneration replaced: both clear it as they finish. Settings, board structure and key lookups
 * are cached, voter_count is not.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { regenerateKey } from "../src/admin/keys.ts";
import { importSnapshot } from "../src/admin/snapshot-import.ts";
import { buildSnapshot, createTestContext, type Json, type TestContext } from "./harness.ts";

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ PROJECT_CACHE_SECONDS: "60" });
});

afterAll(async () => {
  await ctx.close();
});

const board = async (slug: string, key: string): Promise<Json> => {
  const response = await ctx.get(`/api/v3/projects/${slug}`, key);
  expect(response.status).toBe(200);
  return (await response.json()).data;
};

describe("project cache", () => {
  it("an import with replace is served at once: new name, settings, boards and tags under the same key", async () => {
    const snapshot = buildSnapshot({ project: { name: "Before" }, tags: [{ ref: "t1", name: "Old tag" }] });
    await importSnapshot(ctx.db, snapshot, {});
    const key = snapshot.keys[0].key as string;
    const before = await board(snapshot.project.slug, key);
    expect(before.project.name).toBe("Before");
    expect(before.display.show_votes).toBe(true);

    const replaced = {
      ...snapshot,
      project: { ...snapshot.project, name: "After", settings: { show_votes: false } },
      tags: [{ ref: "t2", name: "New tag" }],
      boards: [{ ...snapshot.boards[0], name: "Renamed roadmap" }],
    };
    await importSnapshot(ctx.db, replaced, { replace: true });
    const after = await board(snapshot.project.slug, key);
    expect(after.project.name).toBe("After");
    expect(after.display.show_votes).toBe(false);
    expect(after.tags.map((tag: Json) => tag.name)).toEqual(["New tag"]);
    expect(after.boards[0].name).toBe("Renamed roadmap");
    const list = await ctx.get(`/api/v3/projects/${snapshot.project.slug}/features`, key);
    expect(list.status).toBe(200);
  });

  it("a regenerated key stops working at once although it was just cached", async () => {
    const project = await ctx.importProject({});
    await board(project.slug, project.secretKey);
    const fresh = await regenerateKey(ctx.db, project.slug, "secret");
    expect((await ctx.get(`/api/v3/projects/${project.slug}`, project.secretKey)).status).toBe(401);
    expect((await ctx.get(`/api/v3/projects/${project.slug}`, fresh)).status).toBe(200);
  });

  it("voter_count is read fresh on every board read (not from the cached project)", async () => {
    const project = await ctx.importProject({});
    expect((await board(project.slug, project.secretKey)).project.voter_count).toBe(0);
    await ctx.db.updateTable("projects").set({ voter_count: 3 }).where("slug", "=", project.slug).execute();
    expect((await board(project.slug, project.secretKey)).project.voter_count).toBe(3);
  });
});
