/**
 * CORS (contract, "Authentication" 1 and 3; src/middleware/cors.ts): a browser may read an
 * answer only when an embed key is used from an origin on its project's allowlist. The secret
 * key (server-side only), origin_not_allowed, a missing or invalid key and the open routes (but
 * the public /openapi.json) get no Access-Control-Allow-Origin. Preflights carry no key: the
 * project in the path decides, and /board accepts an origin some public project lists.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type ImportedProject, type TestContext, uniqueSlug } from "./support/harness.ts";

let ctx: TestContext;
let p: ImportedProject;
let board: string;
/** Unique to this file, so no other test's project lists it. */
const allowed = `https://${uniqueSlug("cors")}.example`;
const other = `https://${uniqueSlug("cors")}.example`;

const ACAO = "Access-Control-Allow-Origin";

beforeAll(async () => {
  ctx = await createTestContext();
  p = await ctx.importProject({ project: { allowed_origins: [allowed, "https://second.example"] } });
  board = `/api/v3/projects/${p.slug}`;
});
afterAll(async () => {
  await ctx.close();
});

async function preflight(path: string, origin: string, method = "GET"): Promise<Response> {
  return ctx.app.request(path, {
    method: "OPTIONS",
    headers: { Origin: origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": "x-api-key,content-type" },
  });
}

describe("CORS on actual requests", () => {
  it("names the origin for an embed key from an allowlisted origin, on reads, writes, errors and 304", async () => {
    const read = await ctx.get(board, p.embedKey, { Origin: allowed });
    expect(read.status).toBe(200);
    expect(read.headers.get(ACAO)).toBe(allowed);
    expect(read.headers.get("Vary")).toContain("Origin");
    expect((await ctx.get(board, p.embedKey, { Origin: "https://second.example" })).headers.get(ACAO)).toBe("https://second.example");
    // The same board, cached for the anonymous reader, still names the origin of this request.
    expect((await ctx.get("/api/v3/board", p.embedKey, { Origin: allowed })).headers.get(ACAO)).toBe(allowed);

    const notModified = await ctx.get(board, p.embedKey, { Origin: allowed, "If-None-Match": read.headers.get("ETag")! });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get(ACAO)).toBe(allowed);

    const identity = await ctx.send("POST", `${board}/identity`, p.embedKey, {}, { Origin: allowed });
    expect(identity.status).toBe(201);
    expect(identity.headers.get(ACAO)).toBe(allowed);

    // An error after the key check is readable by the page that made the call.
    const missing = await ctx.get(`${board}/features/999999`, p.embedKey, { Origin: allowed });
    expect(missing.status).toBe(404);
    expect(missing.headers.get(ACAO)).toBe(allowed);
  });

  it("names no origin on origin_not_allowed, for the secret key, or without a valid key", async () => {
    const refused = await ctx.get(board, p.embedKey, { Origin: other });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.code).toBe("origin_not_allowed");
    expect(refused.headers.get(ACAO)).toBeNull();
    for (const origin of ["null", `${allowed}.evil.example`, allowed.replace("https:", "http:")]) {
      const response = await ctx.get(board, p.embedKey, { Origin: origin });
      expect([response.status, response.headers.get(ACAO)]).toEqual([403, null]);
    }

    for (const origin of [allowed, other]) {
      const secret = await ctx.get(board, p.secretKey, { Origin: origin });
      expect(secret.status).toBe(200);
      expect(secret.headers.get(ACAO)).toBeNull();
      const notModified = await ctx.get(board, p.secretKey, { Origin: origin, "If-None-Match": secret.headers.get("ETag")! });
      expect([notModified.status, notModified.headers.get(ACAO)]).toEqual([304, null]);
    }

    const noKey = await ctx.app.request(board, { headers: { Origin: allowed } });
    expect([noKey.status, noKey.headers.get(ACAO)]).toEqual([401, null]);
    const badKey = await ctx.get(board, "no-such-key", { Origin: allowed });
    expect([badKey.status, badKey.headers.get(ACAO)]).toEqual([401, null]);
  });

  it("names no origin on the open routes but the public OpenAPI description, which any origin may read", async () => {
    for (const path of ["/api/v3/health", "/api/v3/docs/reference"]) {
      const response = await ctx.app.request(path, { headers: { Origin: allowed } });
      expect([response.status, response.headers.get(ACAO)]).toEqual([200, null]);
    }
    const description = await ctx.app.request("/api/v3/openapi.json", { headers: { Origin: other } });
    expect([description.status, description.headers.get(ACAO)]).toEqual([200, "*"]);
  });
});

describe("CORS preflights", () => {
  it("allow an origin on the allowlist of the project in the path", async () => {
    for (const method of ["GET", "POST"]) {
      const response = await preflight(`${board}/features`, allowed, method);
      expect(response.status).toBe(204);
      expect(response.headers.get(ACAO)).toBe(allowed);
      expect(response.headers.get("Access-Control-Allow-Headers")).toContain("X-API-Key");
      expect(response.headers.get("Access-Control-Allow-Methods")).toContain(method);
    }
  });

  it("answer 204 without Access-Control-Allow-Origin for any other origin or project", async () => {
    const hidden = await ctx.importProject({ project: { allowed_origins: [allowed], is_private: true } });
    for (const [path, origin] of [
      [`${board}/features`, other],
      [`${board}/features`, "null"],
      [`${board}/features`, `${allowed}.evil.example`],
      [`/api/v3/projects/${uniqueSlug()}/features`, allowed],
      [`/api/v3/projects/${hidden.slug}`, allowed],
      [`/api/v3/projects/%ZZ/features`, allowed],
      ["/api/v3/health", allowed],
      ["/api/v3/board", other],
    ]) {
      const response = await preflight(path!, origin!);
      expect([path, origin, response.status, response.headers.get(ACAO)]).toEqual([path, origin, 204, null]);
    }
  });

  it("allow /board (no slug) from an origin some public project lists", async () => {
    const response = await preflight("/api/v3/board", allowed);
    expect([response.status, response.headers.get(ACAO)]).toEqual([204, allowed]);
  });
});
