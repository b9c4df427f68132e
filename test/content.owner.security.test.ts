/**
 * Owner content routes (tags, boards, columns, releases, messages) take the project's secret key
 * only (owner-api-v3.md, "Common rules"): embed key 403 not_allowed, another project's secret
 * key 403 key_wrong_project, no key 401 missing_key, below PRO 403 not_allowed; identity headers
 * are ignored; a refused write changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { body, createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";
import { adminPath, idsOf, importContentProject, owner } from "./support/owner-content.fixture.ts";

let ctx: TestContext;
let p: ImportedProject;
let other: ImportedProject;
let free: ImportedProject;

/** [method, path under /admin, body] of every owner content route; ids filled from the project. */
function routes(project: ImportedProject): [string, string, unknown][] {
  const ids = idsOf(project);
  return [
    ["GET", "/tags", undefined],
    ["POST", "/tags", { name: "Sneaky" }],
    ["PATCH", `/tags/${ids.tags["t-ui"]}`, { name: "Sneaky" }],
    ["DELETE", `/tags/${ids.tags["t-empty"]}`, undefined],
    ["POST", "/boards", { name: "Sneaky", slug: "sneaky" }],
    ["PATCH", "/boards/0", { name: "Sneaky" }],
    ["DELETE", `/boards/${ids.boards.mobile}`, undefined],
    ["POST", "/boards/0/columns", { name: "Sneaky", status: "open" }],
    ["PATCH", `/columns/${ids.columns["c-open"]}`, { name: "Sneaky" }],
    ["DELETE", `/columns/${ids.columns["m-now"]}`, undefined],
    ["GET", "/messages", undefined],
    ["POST", "/messages", { title: "Sneaky", body: "x" }],
    ["GET", "/messages/1", undefined],
    ["PATCH", "/messages/1", { title: "Sneaky" }],
    ["DELETE", "/messages/1", undefined],
    ["GET", "/releases", undefined],
    ["POST", "/releases", { name: "Sneaky" }],
    ["GET", "/releases/1", undefined],
    ["PATCH", "/releases/1", { name: "Sneaky" }],
    ["DELETE", "/releases/1", undefined],
  ];
}

beforeAll(async () => {
  ctx = await createTestContext();
  p = await importContentProject(ctx);
  other = await importContentProject(ctx);
  free = await importContentProject(ctx, { project: { plan: "free" } });
});
afterAll(async () => {
  await ctx.close();
});

async function snapshotOf(project: ImportedProject) {
  const [tags, doc] = await Promise.all([
    owner(ctx, project, "GET", "/tags?per_page=100"),
    ctx.get(`/api/v3/projects/${project.slug}`, project.secretKey).then((r) => r.json()),
  ]);
  return JSON.stringify([tags.body.data, doc.data.boards]);
}

describe("owner content routes refuse every key but the project's secret key", () => {
  it("embed key: 403 not_allowed; other project's key: 403 key_wrong_project; none: 401; below PRO: 403", async () => {
    const before = await snapshotOf(p);
    for (const [method, path, payload] of routes(p)) {
      const url = adminPath(p, path);
      const embed = await ctx.send(method, url, p.embedKey, payload);
      expect(embed.status, `${method} ${path}`).toBe(403);
      expect((await body(embed)).error.code).toBe("not_allowed");
      const foreign = await ctx.send(method, url, other.secretKey, payload);
      expect(foreign.status, `${method} ${path}`).toBe(403);
      expect((await body(foreign)).error.code).toBe("key_wrong_project");
      const none = await ctx.app.request(url, {
        method,
        headers: { "Content-Type": "application/json" },
        body: payload === undefined ? undefined : JSON.stringify(payload),
      });
      expect(none.status, `${method} ${path}`).toBe(401);
      expect((await body(none)).error.code).toBe("missing_key");
    }
    for (const [method, path, payload] of routes(free)) {
      const refused = await ctx.send(method, adminPath(free, path), free.secretKey, payload);
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect((await body(refused)).error.code).toBe("not_allowed");
    }
    expect(await snapshotOf(p)).toBe(before);
  });

  it("identity headers are ignored (an invalid token does not make the owner route 401)", async () => {
    const result = await owner(ctx, p, "GET", "/tags", undefined, { "X-VF-Anon": "not-a-token", "X-VF-Token": "bad.jwt.here" });
    expect(result.status).toBe(200);
    const made = await owner(ctx, p, "POST", "/tags", { name: "With identity" }, { "X-VF-Anon": "not-a-token" });
    expect(made.status).toBe(201);
  });
});
