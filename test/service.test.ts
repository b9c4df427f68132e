/** Open routes and the cross-cutting HTTP rules (contract, "Service", "Versioning", "Errors"). */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
const installedBundle = createRequire(import.meta.url).resolve("@scalar/api-reference/browser/standalone.js");
const installedScalar = JSON.parse(
  readFileSync(new URL("../node_modules/@scalar/api-reference/package.json", import.meta.url), "utf8"),
) as { version: string };
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

describe("GET /health", () => {
  it("answers the HealthObject in the envelope with version and tracing headers", async () => {
    const response = await ctx.app.request("/api/v3/health");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { status: "ok", version: "3" }, meta: null, error: null });
    expect(response.headers.get("X-API-Version")).toBe("3");
    expect(response.headers.get("X-Request-Id")).toMatch(/.+/);
    expect(response.headers.get("Cache-Control")).toBe("private, max-age=60");
    expect(response.headers.get("X-RateLimit-Limit")).toBeNull();
  });

  it("echoes a client-sent X-Request-Id", async () => {
    const response = await ctx.app.request("/api/v3/health", { headers: { "X-Request-Id": "trace-abc-123" } });
    expect(response.headers.get("X-Request-Id")).toBe("trace-abc-123");
  });

  it("answers 304 with no body when If-None-Match carries its ETag", async () => {
    const first = await ctx.app.request("/api/v3/health");
    const etag = first.headers.get("ETag");
    expect(etag).toBeTruthy();
    const second = await ctx.app.request("/api/v3/health", { headers: { "If-None-Match": etag! } });
    expect(second.status).toBe(304);
    expect(await second.text()).toBe("");
  });

  it("answers 405 with an Allow header for a method the path does not take", async () => {
    const response = await ctx.app.request("/api/v3/health", { method: "DELETE" });
    expect(response.status).toBe(405);
    expect(response.headers.get("Allow")).toContain("GET");
    const body = await response.json();
    expect(body.data).toBeNull();
    expect(body.meta).toBeNull();
    expect(body.error.code).toBe("method_not_allowed");
  });
});

describe("GET /ready", () => {
  it("answers 200 with each dependency's check, never cached and never 304", async () => {
    const response = await ctx.app.request("/api/v3/ready");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      data: { status: "ready", checks: { database: "ok", redis: process.env.REDIS_URL ? "ok" : "not_configured" } },
      meta: null,
      error: null,
    });
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    expect(response.headers.get("ETag")).toBeNull();
    expect(response.headers.get("X-Request-Id")).toMatch(/.+/);
  });

  it("needs no key and is described in /openapi.json with its 503", async () => {
    const document = await (await ctx.app.request("/api/v3/openapi.json")).json();
    const operation = document.paths["/api/v3/ready"].get;
    expect(operation.operationId).toBe("getReadiness");
    expect(operation.security).toEqual([]);
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["200", "503"]));
  });
});

describe("GET /openapi.json", () => {
  it("serves an OpenAPI 3.1 document where every operation has an operationId, summary and tags", async () => {
    const response = await ctx.app.request("/api/v3/openapi.json");
    expect(response.status).toBe(200);
    const document = await response.json();
    expect(document.openapi).toBe("3.1.0");
    const operations = Object.values(document.paths as Record<string, Record<string, any>>).flatMap((item) => Object.values(item));
    const contractRoutes = [
      "get /health",
      // Not in the contract: the readiness probe beside it (docs/operations.md, "Health and readiness").
      "get /ready",
      "get /openapi.json",
      "get /docs",
      // clients-v3.md, "Embedding": the board widget's module.
      "get /widget.js",
      "get /board",
      "get /projects/{slug}",
      "get /projects/{slug}/features",
      "get /projects/{slug}/features/{id}",
      "get /projects/{slug}/features/{id}/comments",
      "get /projects/{slug}/changelog",
      "get /projects/{slug}/changelog/{id}",
      "get /projects/{slug}/messages",
      "post /projects/{slug}/identity",
      "post /projects/{slug}/features",
      "post /projects/{slug}/features/{id}/vote",
      "delete /projects/{slug}/features/{id}/vote",
      "post /projects/{slug}/features/{id}/comments",
      "delete /projects/{slug}/comments/{cid}",
      "post /projects/{slug}/comments/{cid}/like",
      "post /projects/{slug}/messages/{id}/dismiss",
      "get /projects/{slug}/voters",
      "get /projects/{slug}/revenue/features",
      // engagement-api-v3.md, "Feeds".
      "get /projects/{slug}/changelog.atom",
      "get /projects/{slug}/roadmap.atom",
      // engagement-api-v3.md, "Notifications (in-app inbox)".
      "get /projects/{slug}/notifications",
      "get /projects/{slug}/notifications/unread-count",
      "post /projects/{slug}/notifications/read",
      // engagement-api-v3.md, "Subscriptions"
      "get /projects/{slug}/subscriptions",
      "put /projects/{slug}/features/{id}/subscription",
      "delete /projects/{slug}/features/{id}/subscription",
      // engagement-api-v3.md, "Similar features".
      "get /projects/{slug}/features/similar",
      // engagement-api-v3.md, "Email notifications": the open unsubscribe routes.
      "get /unsubscribe/{token}",
      "post /unsubscribe/{token}",
      // engagement-api-v3.md, "MCP endpoint".
      "post /projects/{slug}/mcp",
    ];
    // The owner routes (owner-api-v3.md, under /projects/{slug}/admin) are listed apart, tagged
    // "Owner"; so are the billing webhooks (/billing/{system}/{slug}), tagged "Billing".
    const described = Object.entries(document.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path.replace(/^\/api\/v3/, "")}`))
      .filter((route) => !route.includes("/projects/{slug}/admin/") && !route.includes(" /billing/"));
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      if (path.includes("/projects/{slug}/admin/")) for (const operation of Object.values(item)) expect(operation.tags).toEqual(["Owner"]);
      if (path.startsWith("/api/v3/billing/")) for (const operation of Object.values(item)) expect(operation.tags).toEqual(["Billing"]);
    }
    expect(Object.keys(document.paths).filter((path) => path.startsWith("/api/v3/billing/"))).toHaveLength(2);
    expect(described.sort()).toEqual(contractRoutes.sort());
    for (const operation of operations) {
      expect(operation.operationId).toEqual(expect.any(String));
      expect(operation.summary).toEqual(expect.any(String));
      expect(operation.tags?.length).toBeGreaterThan(0);
    }
    expect(document.paths["/api/v3/health"].get.operationId).toBe("getHealth");
  });
});

describe("GET /docs", () => {
  it("redirects with 301 to a reference page the service serves itself", async () => {
    const response = await ctx.app.request("/api/v3/docs");
    expect(response.status).toBe(301);
    const location = response.headers.get("Location")!;
    const page = await ctx.app.request(location);
    expect(page.status).toBe(200);
    expect(page.headers.get("Content-Type")).toContain("text/html");
    expect(await page.text()).toContain("/api/v3/openapi.json");
  });

  it("serves the reference page with the pinned Scalar bundle from this service, no CDN, integrity checked", async () => {
    const page = await ctx.app.request("/api/v3/docs/reference");
    const html = await page.text();
    const scripts = [...html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"[^>]*>/g)];
    expect(scripts.map((m) => m[1])).toEqual([`/api/v3/docs/scalar-${installedScalar.version}.js`]);
    expect(html).not.toMatch(/https?:\/\//);
    const integrity = /integrity="(sha384-[^"]+)"/.exec(scripts[0]![0])![1];
    // Only this origin's scripts and the page's own inline start-up script (by hash) may run.
    const csp = page.headers.get("Content-Security-Policy")!;
    expect(csp).toMatch(/script-src 'self' 'sha256-[^']+'(;|$)/);
    expect(csp).toContain("connect-src 'self'");

    const bundle = await ctx.app.request(scripts[0]![1]!);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("Content-Type")).toBe("text/javascript; charset=utf-8");
    expect(bundle.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    const bytes = Buffer.from(await bundle.arrayBuffer());
    expect(bytes.equals(readFileSync(installedBundle))).toBe(true);
    expect(`sha384-${createHash("sha384").update(bytes).digest("base64")}`).toBe(integrity);

    const gzipped = await ctx.app.request(scripts[0]![1]!, { headers: { "Accept-Encoding": "gzip, br" } });
    expect(gzipped.headers.get("Content-Encoding")).toBe("gzip");
    expect(gunzipSync(Buffer.from(await gzipped.arrayBuffer())).equals(bytes)).toBe(true);
    const notModified = await ctx.app.request(scripts[0]![1]!, { headers: { "If-None-Match": bundle.headers.get("ETag")! } });
    expect(notModified.status).toBe(304);
  });
});

describe("unknown paths", () => {
  it("answer 404 not_found in the envelope", async () => {
    const response = await ctx.app.request("/api/v3/nothing-here");
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      data: null,
      meta: null,
      error: { code: "not_found", field: null, message: expect.any(String) },
    });
  });
});
