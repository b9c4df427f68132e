/**
 * Read caching (contract, "Endpoints" and "Limits"): every successful read carries an ETag and
 * Cache-Control: private, max-age=60; If-None-Match with a matching ETag answers 304 with no
 * body (hono's etag middleware does the hashing and the 304).
 */
import type { MiddlewareHandler } from "hono";
import { etag, RETAINED_304_HEADERS } from "hono/etag";
import type { AppEnv } from "../lib/context.ts";

export const READ_CACHE_CONTROL = "private, max-age=60";

// hono strips a 304 down to a few caching headers; the contract wants the request id, the API
// version and the rate headers on every response, and a browser needs the CORS ones.
const etagMiddleware = etag({
  retainedHeaders: [
    ...RETAINED_304_HEADERS, "x-request-id", "x-api-version", "x-ratelimit-limit", "x-ratelimit-remaining",
    "x-ratelimit-reset", "access-control-allow-origin", "access-control-allow-credentials",
    "access-control-expose-headers",
  ],
});

export function readCacheMiddleware(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.req.method !== "GET" && c.req.method !== "HEAD") {
      await next();
      return;
    }
    await etagMiddleware(c, async () => {
      await next();
      if (c.res.status === 200) c.header("Cache-Control", READ_CACHE_CONTROL);
    });
  };
}
