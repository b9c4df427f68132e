/**
 * GET /api/v3/widget.js (docs/contract/clients-v3.md, "Embedding"): an open route (no key)
 * answering one JavaScript module with an ETag and `Cache-Control: public, max-age=300`, and the
 * same bytes at `?v={X-Widget-Version}` with `public, max-age=31536000, immutable`.
 */
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

describe("GET /api/v3/widget.js", () => {
  it("answers the module without a key, cacheable for 5 minutes, with its version", async () => {
    const response = await ctx.app.request("/api/v3/widget.js");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("text/javascript; charset=utf-8");
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=300");
    expect(response.headers.get("ETag")).toMatch(/^"[0-9a-f]{16}"$/);
    expect(response.headers.get("X-Widget-Version")).toMatch(/^[0-9a-f]{16}$/);
    expect(response.headers.get("X-RateLimit-Limit")).toBeNull();
    const source = await response.text();
    expect(source).toContain("feedback-board");
    expect(source).toContain("customElements.define");
  });

  it("answers the same bytes at ?v={version}, immutable for a year; another v keeps 5 minutes", async () => {
    const plain = await ctx.app.request("/api/v3/widget.js");
    const version = plain.headers.get("X-Widget-Version")!;
    const pinned = await ctx.app.request(`/api/v3/widget.js?v=${version}`);
    expect(pinned.status).toBe(200);
    expect(pinned.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    expect(await pinned.text()).toBe(await plain.text());
    const stale = await ctx.app.request("/api/v3/widget.js?v=0000000000000000");
    expect(stale.headers.get("Cache-Control")).toBe("public, max-age=300");
  });

  it("answers 304 to its ETag, and gzip when accepted", async () => {
    const first = await ctx.app.request("/api/v3/widget.js");
    const etag = first.headers.get("ETag")!;
    const again = await ctx.app.request("/api/v3/widget.js", { headers: { "If-None-Match": etag } });
    expect(again.status).toBe(304);
    const gzipped = await ctx.app.request("/api/v3/widget.js", { headers: { "Accept-Encoding": "gzip, br" } });
    expect(gzipped.headers.get("Content-Encoding")).toBe("gzip");
    expect(gzipped.headers.get("ETag")).not.toBe(etag);
    expect(gunzipSync(Buffer.from(await gzipped.arrayBuffer())).toString()).toBe(await first.text());
  });
});
