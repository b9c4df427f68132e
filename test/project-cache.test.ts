/**
 * The app's caches (src/lib/data/app-caches.ts) never serve what an import or a key regeneration
 * replaced, once the change is announced as the admin command line announces it (new lookups
 * revision; the database notification clears every app too). Settings, board structure and key
 * lookups are cached; voter_count follows every vote.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importSnapshot } from "../src/admin/snapshot-import.ts";
import { regenerateKey } from "../src/routes/keys/keys.owner.repository.ts";
import { type Answer, body, buildSnapshot, createTestContext, type Schemas, type TestContext } from "./support/harness.ts";

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ PROJECT_CACHE_SECONDS: "60" });
});

afterAll(async () => {
  await ctx.close();
});

const board = async (slug: string, key: string): Promise<Schemas["BoardDocument"]> => {
  const response = await ctx.get(`/api/v3/projects/${slug}`, key);
  expect(response.status).toBe(200);
  return (await body<Answer<"/api/v3/projects/{slug}", "get">>(response)).data;
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
    await ctx.announceAdminChange(snapshot.project.slug);
    const after = await board(snapshot.project.slug, key);
    expect(after.project.name).toBe("After");
    expect(after.display.show_votes).toBe(false);
    expect(after.tags.map((tag) => tag.name)).toEqual(["New tag"]);
    expect(after.boards[0]!.name).toBe("Renamed roadmap");
    const list = await ctx.get(`/api/v3/projects/${snapshot.project.slug}/features`, key);
    expect(list.status).toBe(200);
  });

  it("a regenerated key stops working at once although it was just cached", async () => {
    const project = await ctx.importProject({});
    await board(project.slug, project.secretKey);
    const fresh = await regenerateKey(ctx.db, project.slug, "secret");
    await ctx.announceAdminChange(project.slug);
    expect((await ctx.get(`/api/v3/projects/${project.slug}`, project.secretKey)).status).toBe(401);
    expect((await ctx.get(`/api/v3/projects/${project.slug}`, fresh)).status).toBe(200);
  });

  it("voter_count moves with votes although the project is cached", async () => {
    const project = await ctx.importProject({
      voters: [{ ref: "v1", anon_token: "anon-token-project-cache-voter-1" }],
      features: [{ ref: "f1", board: "roadmap", column: "c-open", heading: "One" }],
    });
    expect((await board(project.slug, project.secretKey)).project.voter_count).toBe(0);
    const path = `/api/v3/projects/${project.slug}/features/${project.ids.ids.features.f1}/vote`;
    const headers = { "X-VF-Anon": "anon-token-project-cache-voter-1" };
    expect((await ctx.send("POST", path, project.secretKey, undefined, headers)).status).toBe(200);
    expect((await board(project.slug, project.secretKey)).project.voter_count).toBe(1);
    expect((await ctx.send("DELETE", path, project.secretKey, undefined, headers)).status).toBe(200);
    expect((await board(project.slug, project.secretKey)).project.voter_count).toBe(0);
  });

  it("a voter banned by an import is refused at once although its identity was just cached", async () => {
    const token = `anon-project-cache-ban-${Date.now()}`;
    const snapshot = buildSnapshot({
      voters: [{ ref: "v1", anon_token: token }],
      features: [{ ref: "f1", board: "roadmap", column: "c-open", heading: "One" }],
    });
    const ids = await importSnapshot(ctx.db, snapshot, {});
    const key = snapshot.keys[0].key as string;
    const comments = `/api/v3/projects/${snapshot.project.slug}/features/${ids.ids.features.f1}/comments`;
    const headers = { "X-VF-Anon": token };
    expect((await ctx.send("POST", comments, key, { content: "Before the ban" }, headers)).status).toBe(201);
    const banned = { ...snapshot, voters: [{ ...snapshot.voters[0], banned: true }] };
    const replacedIds = await importSnapshot(ctx.db, banned, { replace: true });
    await ctx.announceAdminChange(snapshot.project.slug);
    const replacedComments = `/api/v3/projects/${snapshot.project.slug}/features/${replacedIds.ids.features.f1}/comments`;
    const refused = await ctx.send("POST", replacedComments, key, { content: "After the ban" }, headers);
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.code).toBe("voter_banned");
  });
});
