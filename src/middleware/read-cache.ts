/**
 * Read caching (contract, "Endpoints" and "Limits"): every successful read carries an ETag and
 * Cache-Control: private, max-age=60; If-None-Match with a matching ETag answers 304 with no
 * body. The ETag is the SHA-1 of the body, as hono's etag middleware makes it, but taken from the
 * body string the handler produced: hono's version clones the response into two streams and
 * hashes through WebCrypto, which cost more per request than serializing the page did.
 */
import { hash } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { RETAINED_304_HEADERS } from "hono/etag";
import type { AppEnv } from "../lib/http/context.ts";
import { cachedStringBody, wasSentDirect } from "../lib/runtime/runtime-adapter.ts";
import { isStaticHeader } from "./static-headers.ts";

export const READ_CACHE_CONTROL = "private, max-age=60";
/** Owner reads are never reused by clients (owner-api-v3.md, "Common rules"). */
export const OWNER_READ_CACHE_CONTROL = "private, max-age=0";

// hono strips a 304 down to a few caching headers; the contract wants the request id, the API
// version and the rate headers on every response, and a browser needs the CORS ones. The static
// headers (static-headers.ts: secure headers, Vary) stay too.
const RETAINED = new Set([
  ...RETAINED_304_HEADERS,
  "x-request-id",
  "x-api-version",
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "access-control-allow-origin",
  "access-control-allow-credentials",
  "access-control-expose-headers",
]);

/** The strong ETag of a body: its SHA-1 in hex, quoted. */
export function etagOf(body: string | Uint8Array): string {
  return `"${hash("sha1", body, "hex")}"`;
}

/** Whether If-None-Match names this ETag (weak comparison, as hono's etag middleware does). */
export function etagMatches(etag: string, ifNoneMatch: string | null): boolean {
  const expected = etag.replace(/^W\//, "");
  return ifNoneMatch?.match(/"[^"]*"/g)?.some((tag) => tag === expected) ?? false;
}

export function readCacheMiddleware(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.req.method !== "GET" && c.req.method !== "HEAD") {
      await next();
      return;
    }
    const ifNoneMatch = c.req.header("If-None-Match") ?? null;
    await next();
    // A cached hit written straight to Node already carries all of this (shared-read-cache.ts).
    if (wasSentDirect(c.res)) return;
    // Through c.res.headers, not c.header(): after the handler, c.header() rebuilds the response.
    // A route that chose its own caching (the reference page's versioned bundle) keeps it.
    if (c.res.status === 200 && !c.res.headers.has("Cache-Control")) {
      c.res.headers.set("Cache-Control", c.get("access") === "owner" ? OWNER_READ_CACHE_CONTROL : READ_CACHE_CONTROL);
    }
    // A probe that must reflect this moment (GET /ready) carries no validator: no 304 for it.
    if (!c.res.ok || c.res.headers.get("Cache-Control") === "no-store") return;
    let etag = c.res.headers.get("ETag");
    let streamed = false;
    if (!etag) {
      let body: string | Uint8Array | undefined = cachedStringBody(c.res);
      if (body === undefined) {
        if (!c.res.body) return;
        body = new Uint8Array(await c.res.clone().arrayBuffer());
        streamed = true;
      }
      etag = etagOf(body);
    }
    if (ifNoneMatch === "*" || etagMatches(etag, ifNoneMatch)) {
      if (streamed) await c.res.body?.cancel();
      c.res = new Response(null, { status: 304, statusText: "Not Modified", headers: { ETag: etag } });
      for (const name of Array.from(c.res.headers.keys())) {
        if (!RETAINED.has(name.toLowerCase()) && !isStaticHeader(name.toLowerCase())) c.res.headers.delete(name);
      }
    } else {
      c.res.headers.set("ETag", etag);
    }
  };
}
