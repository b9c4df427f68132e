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
import { resolveAllAllowedOrigins, resolveAllowedOrigins } from "../lib/data/resolution.ts";
import type { AppEnv } from "../lib/http/context.ts";
import { isNamableOrigin } from "./api-key.ts";

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

/**
 * Which origins a preflight may allow, by where it is mounted (src/app.ts): "project" on
 * /projects/{slug}/* (that public project's allowlist), "board" on /board (any public project's
 * allowlist), "none" everywhere else.
 */
export type PreflightScope = "project" | "board" | "none";

/** The origin a preflight allows: `origin` itself, or null (see the module comment). */
async function preflightOrigin(scope: PreflightScope, origin: string, c: Context<AppEnv>): Promise<string | null> {
  if (!isNamableOrigin(origin)) return null;
  const deps = c.get("deps");
  if (scope === "project") {
    const allowed = await resolveAllowedOrigins(deps, c.req.param("slug") ?? "");
    return allowed?.includes(origin) ? origin : null;
  }
  if (scope === "board") return (await resolveAllAllowedOrigins(deps)).has(origin) ? origin : null;
  return null;
}

/** Answers every OPTIONS request with 204 and the preflight headers of `scope`; other requests pass. */
export function preflightMiddleware(scope: PreflightScope): MiddlewareHandler<AppEnv> {
  const preflight = cors({
    origin: (origin, c) => preflightOrigin(scope, origin, c),
    allowHeaders: ALLOWED_HEADERS,
    exposeHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });
  return (c, next) => (c.req.method === "OPTIONS" ? preflight(c, next) : next());
}
