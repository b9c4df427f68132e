/**
 * CORS (contract, "Authentication" 1 and 3): only the embed key is meant for web pages, and only
 * from the origins on its project's allowlist; the secret key is for servers.
 *
 * - Actual requests: Access-Control-Allow-Origin is written by the key check
 *   (src/middleware/api-key.ts, `allowOrigin`) when an embed key comes from an origin on its
 *   project's allowlist, and nowhere else: not for the secret key, not on origin_not_allowed, not
 *   without a valid key, not on the open routes (except /openapi.json, public: `*`).
 * - Preflights (OPTIONS) carry no key, so the path decides: /projects/{slug}/... allows the
 *   origin when it is on that public project's allowlist; /board (the embed key's own board, no
 *   slug) allows an origin on the allowlist of any public project (the real request is then held
 *   to its own key's allowlist). Anything else gets a 204 without Access-Control-Allow-Origin,
 *   which the browser treats as a refusal. Exact string match; the opaque origin `null` never.
 */
import type { Context, MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "../lib/context.ts";
import { allAllowedOriginsCached, findAllowedOriginsBySlugCached } from "../lib/projects.repository.ts";
import { isNamableOrigin, isProjectSlug, slugOf } from "./api-key.ts";

/** Response headers a browser script may read (the contract's tracing, version and rate headers). */
export const EXPOSED_HEADERS = [
  "ETag",
  "X-Request-Id",
  "X-API-Version",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "Retry-After",
  "Idempotent-Replay",
];

/** Request headers a browser script may send. */
const ALLOWED_HEADERS = ["X-API-Key", "X-VF-Anon", "X-VF-Token", "Idempotency-Key", "Content-Type", "If-None-Match", "X-Request-Id"];

/** The origin a preflight for `c.req.path` allows: `origin` itself, or null (see the module comment). */
async function preflightOrigin(origin: string, c: Context<AppEnv>): Promise<string | null> {
  if (!isNamableOrigin(origin)) return null;
  const deps = c.get("deps");
  const slug = slugOf(c.req.path);
  if (slug !== undefined) {
    if (!isProjectSlug(slug)) return null;
    const allowed = await findAllowedOriginsBySlugCached(deps, slug);
    return allowed?.includes(origin) ? origin : null;
  }
  if (c.req.path === "/api/v3/board") {
    return (await allAllowedOriginsCached(deps)).has(origin) ? origin : null;
  }
  return null;
}

/** Answers every OPTIONS request with 204 and the preflight headers; other requests pass. */
export function preflightMiddleware(): MiddlewareHandler<AppEnv> {
  const preflight = cors({ origin: preflightOrigin, allowHeaders: ALLOWED_HEADERS, exposeHeaders: EXPOSED_HEADERS, maxAge: 600 });
  return (c, next) => (c.req.method === "OPTIONS" ? preflight(c, next) : next());
}
