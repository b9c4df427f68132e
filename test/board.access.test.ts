/** GET /board and GET /projects/{slug}: keys, plan, privacy, origins, caching and headers. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { body, createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
let p: ImportedProject;
let other: ImportedProject;
beforeAll(async () => {
  ctx = await createTestContext();
  p = await ctx.importProject({ voters: [{ ref: "v", anon_token: "anon-board-access-token-0001" }] });
  other = await ctx.importProject({});
});
afterAll(async () => {
  await ctx.close();
});

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(await body(response)).toEqual({ data: null, meta: null, error: { code, field: null, message: expect.any(String) } });
}

describe("board access", () => {
  it("answers 401 missing_key without X-API-Key and invalid_key for an unknown key", async () => {
    await expectError(await ctx.app.request(`/api/v3/projects/${p.slug}`), 401, "missing_key");
    await expectError(await ctx.app.request("/api/v3/board"), 401, "missing_key");
    await expectError(await ctx.get(`/api/v3/projects/${p.slug}`, "not-a-real-key-0000000000000"), 401, "invalid_key");
    await expectError(await ctx.get("/api/v3/board", "not-a-real-key-0000000000000"), 401, "invalid_key");
  });

  it("answers 404 not_found for an unknown slug and 403 key_wrong_project for another project's key", async () => {
    await expectError(await ctx.get("/api/v3/projects/no-such-project-here", p.secretKey), 404, "not_found");
    await expectError(await ctx.get(`/api/v3/projects/${other.slug}`, p.secretKey), 403, "key_wrong_project");
    await expectError(await ctx.get(`/api/v3/projects/${other.slug}`, p.embedKey), 403, "key_wrong_project");
  });

  it("answers 404 for a private project, with its own key too", async () => {
    const hidden = await ctx.importProject({ project: { is_private: true } });
    await expectError(await ctx.get(`/api/v3/projects/${hidden.slug}`, hidden.secretKey), 404, "not_found");
    await expectError(await ctx.get("/api/v3/board", hidden.embedKey), 404, "not_found");
    await expectError(await ctx.get(`/api/v3/projects/${hidden.slug}`, p.secretKey), 404, "not_found");
  });

  it("answers 403 not_allowed below the PRO plan", async () => {
    const free = await ctx.importProject({ project: { plan: "free" } });
    await expectError(await ctx.get(`/api/v3/projects/${free.slug}`, free.secretKey), 403, "not_allowed");
    await expectError(await ctx.get("/api/v3/board", free.embedKey), 403, "not_allowed");
  });

  it("checks the Origin of embed-key calls only", async () => {
    const path = `/api/v3/projects/${p.slug}`;
    await expectError(await ctx.get(path, p.embedKey, { Origin: "https://evil.example" }), 403, "origin_not_allowed");
    await expectError(await ctx.get("/api/v3/board", p.embedKey, { Origin: "https://evil.example" }), 403, "origin_not_allowed");
    expect((await ctx.get(path, p.embedKey, { Origin: "https://allowed.example" })).status).toBe(200);
    expect((await ctx.get(path, p.embedKey)).status).toBe(200);
    expect((await ctx.get(path, p.secretKey, { Origin: "https://evil.example" })).status).toBe(200);
  });

  it("sends ETag, Cache-Control, X-API-Version and a request id; If-None-Match answers 304 with no body", async () => {
    for (const [path, key] of [
      [`/api/v3/projects/${p.slug}`, p.secretKey],
      ["/api/v3/board", p.embedKey],
    ] as const) {
      const first = await ctx.get(path, key, { "X-Request-Id": "board-req-42" });
      expect(first.status).toBe(200);
      const etag = first.headers.get("ETag");
      expect(etag).toBeTruthy();
      expect(first.headers.get("Cache-Control")).toBe("private, max-age=60");
      expect(first.headers.get("X-API-Version")).toBe("3");
      expect(first.headers.get("X-Request-Id")).toBe("board-req-42");
      expect(first.headers.get("Content-Type")).toMatch(/application\/json/);
      const second = await ctx.get(path, key, { "If-None-Match": etag!, "X-Request-Id": "board-req-43" });
      expect(second.status).toBe(304);
      expect(await second.text()).toBe("");
      expect(second.headers.get("ETag")).toBe(etag);
      expect(second.headers.get("X-Request-Id")).toBe("board-req-43");
      expect(second.headers.get("X-API-Version")).toBe("3");
      expect(second.headers.get("X-RateLimit-Limit")).toBeTruthy();
      const third = await ctx.get(path, key, { "If-None-Match": '"stale"' });
      expect(third.status).toBe(200);
    }
  });

  it("answers 405 for a method the path does not take", async () => {
    const response = await ctx.send("DELETE", `/api/v3/projects/${p.slug}`, p.secretKey, undefined, {
      "X-VF-Anon": "anon-board-access-token-0001",
    });
    expect(response.status).toBe(405);
    expect((await body(response)).error.code).toBe("method_not_allowed");
  });
});
