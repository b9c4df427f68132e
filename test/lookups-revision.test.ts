/**
 * Cached lookups (key -> project and settings, anonymous voters) are retired on every instance
 * by the project's lookups revision, read with the rate-limit counter on every keyed request
 * (owner-api-v3.md, "Common rules" and Rules 6-8: an owner change is seen by the very next
 * request anywhere). Two apps over one database and one shared store stand for two instances:
 * each has its own caches (AppDeps.caches).
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.ts";
import { createAppCaches } from "../src/lib/data/app-caches.ts";
import type { AppDeps } from "../src/lib/http/context.ts";
import { body, createTestContext, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
let otherInstance: ReturnType<typeof createApp>;
let otherDeps: AppDeps;

beforeAll(async () => {
  ctx = await createTestContext({ PROJECT_CACHE_SECONDS: "300" });
  // Same database and store, its own caches.
  otherDeps = { ...ctx.deps, caches: createAppCaches(ctx.deps.config) };
  otherInstance = createApp(otherDeps);
});
afterAll(() => ctx.close());

function read(app: ReturnType<typeof createApp>, path: string, key: string, headers: Record<string, string> = {}) {
  return app.request(path, { headers: { "X-API-Key": key, ...headers } });
}

/** What an owner write does after changing rows: a new content and lookups revision. */
async function ownerWriteAnnounced(projectId: number) {
  await ctx.deps.contentRevisions.bump(projectId, { lookups: true });
}

async function projectIdOf(slug: string): Promise<number> {
  const row = await ctx.db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirstOrThrow();
  return row.id;
}

describe("lookups revision", () => {
  it("a deleted key keeps working from another instance's cache until the revision moves, then answers 401 invalid_key", async () => {
    const project = await ctx.importProject();
    expect((await read(otherInstance, `/api/v3/projects/${project.slug}`, project.secretKey)).status).toBe(200);
    const id = await projectIdOf(project.slug);
    await ctx.db.deleteFrom("api_keys").where("project_id", "=", id).where("kind", "=", "secret").execute();
    // Without an announcement the other instance still trusts its cache: the cache is real.
    expect((await read(otherInstance, `/api/v3/projects/${project.slug}`, project.secretKey)).status).toBe(200);
    await ownerWriteAnnounced(id);
    const after = await read(otherInstance, `/api/v3/projects/${project.slug}`, project.secretKey);
    expect(after.status).toBe(401);
    expect((await body(after)).error.code).toBe("invalid_key");
  });

  it("a changed setting shows on the other instance's next read", async () => {
    const project = await ctx.importProject();
    const path = `/api/v3/projects/${project.slug}`;
    expect((await body(await read(otherInstance, path, project.secretKey))).data.display.show_votes).toBe(true);
    const id = await projectIdOf(project.slug);
    await sql`UPDATE projects SET settings = jsonb_set(settings, '{show_votes}', 'false') WHERE id = ${id}`.execute(ctx.db);
    await ownerWriteAnnounced(id);
    expect((await body(await read(otherInstance, path, project.secretKey))).data.display.show_votes).toBe(false);
  });

  it("a refusal from a cached allowlist is checked against a fresh lookup before it is sent", async () => {
    const project = await ctx.importProject();
    const path = `/api/v3/projects/${project.slug}`;
    const origin = { Origin: "https://new.example" };
    expect((await read(otherInstance, path, project.embedKey, origin)).status).toBe(403);
    const id = await projectIdOf(project.slug);
    await ctx.db
      .updateTable("projects")
      .set({ allowed_origins: ["https://new.example"] })
      .where("id", "=", id)
      .execute();
    expect((await read(otherInstance, path, project.embedKey, origin)).status).toBe(200);
  });

  it("a banned anonymous voter is refused on its next write through the other instance", async () => {
    const project = await ctx.importProject({
      voters: [{ ref: "ada", kind: "anonymous", anon_token: "anon-token-ada-lookups-revision-0001" }],
    });
    const voter = { "X-VF-Anon": "anon-token-ada-lookups-revision-0001" };
    const suggest = (app: ReturnType<typeof createApp>) =>
      app.request(`/api/v3/projects/${project.slug}/features`, {
        method: "POST",
        headers: { "X-API-Key": project.secretKey, "Content-Type": "application/json", ...voter },
        body: JSON.stringify({ heading: "Offline mode", description: "Works on a plane" }),
      });
    expect((await suggest(otherInstance)).status).toBe(201);
    const id = await projectIdOf(project.slug);
    await ctx.db.updateTable("voters").set({ banned: true }).where("project_id", "=", id).execute();
    await ownerWriteAnnounced(id);
    const refused = await suggest(otherInstance);
    expect(refused.status).toBe(403);
    expect((await body(refused)).error.code).toBe("voter_banned");
  });

  it("an owner write records its own new lookups revision as seen in its app, not in the others", async () => {
    const project = await ctx.importProject();
    const id = await projectIdOf(project.slug);
    const path = `/api/v3/projects/${project.slug}`;
    expect((await read(ctx.app, path, project.secretKey)).status).toBe(200);
    expect((await read(otherInstance, path, project.secretKey)).status).toBe(200);
    const patched = await ctx.send("PATCH", `${path}/admin/settings`, project.secretKey, { settings: { show_votes: false } });
    expect(patched.status, JSON.stringify(await body(patched))).toBe(200);
    const { revisions } = await ctx.deps.rateLimiter.consumeReadingRevisions("lookups-revision-test", 1000, 60, id);
    // The writer cleared its lookups after its commit: nothing to reload on its next request.
    expect(ctx.deps.caches.seenLookupRevisions.changed(id, revisions!.lookups)).toBe(false);
    // The other instance has not seen the change yet, and reloads on its next request.
    expect(otherDeps.caches.seenLookupRevisions.changed(id, revisions!.lookups)).toBe(true);
    expect((await body(await read(ctx.app, path, project.secretKey))).data.display.show_votes).toBe(false);
  });
});
