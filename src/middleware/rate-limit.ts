/**
 * Per-key rate budgets (contract, "Limits"): GET/HEAD count against the read budget, every
 * other method against the write budget; embed keys have their own budgets (config). Sets
 * X-RateLimit-Limit / -Remaining / -Reset (Unix seconds) on every keyed response and answers
 * 429 rate_limited with Retry-After (seconds) once the window's budget is spent. The same round
 * trip reads the project's content revision for the shared read cache (c.get("contentRevision"))
 * and its lookups revision: when that moved since this process last saw it, the cached key,
 * settings, board structure and voters are dropped and the key is checked again.
 *
 * A route may decide the budget itself (`budgetOf`: the MCP endpoint counts a tool call against
 * the budget of the route the tool wraps). An in-process request made by such a route for the
 * same call (app.fetch with the binding `{ rateCounted: true }`, which no HTTP client can set) is
 * not counted again: the call was counted once, by the request that made it.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { Config } from "../config.ts";
import type { AppEnv } from "../lib/http/context.ts";
import { ApiError } from "../lib/http/errors.ts";
import { setResponseHeader } from "../lib/runtime/runtime-adapter.ts";
import { reauthorizeFresh } from "./api-key.ts";

const WINDOW_SECONDS = 60;

/** The per-minute budget for a key kind and request kind. */
export function budgetFor(config: Config, keyKind: "secret" | "embed", isRead: boolean): number {
  if (keyKind === "embed") {
    return isRead ? config.RATE_LIMIT_EMBED_READS_PER_MINUTE : config.RATE_LIMIT_EMBED_WRITES_PER_MINUTE;
  }
  return isRead ? config.RATE_LIMIT_READS_PER_MINUTE : config.RATE_LIMIT_WRITES_PER_MINUTE;
}

export type Budget = "read" | "write";

/** The hono bindings of an in-process request whose budget its caller already counted. */
export interface RateCountedBindings {
  rateCounted: true;
}

function countedByCaller(c: Context<AppEnv>): boolean {
  return (c.env as Partial<RateCountedBindings> | undefined)?.rateCounted === true;
}

/** The default budget of a request: GET and HEAD are reads, every other method a write. */
function budgetByMethod(c: Context<AppEnv>): Budget {
  return c.req.method === "GET" || c.req.method === "HEAD" ? "read" : "write";
}

export function rateLimitMiddleware(
  options: { budgetOf?: (c: Context<AppEnv>) => Budget | Promise<Budget> } = {},
): MiddlewareHandler<AppEnv> {
  const budgetOf = options.budgetOf ?? budgetByMethod;
  return async (c, next) => {
    if (countedByCaller(c)) {
      // No revision read: the shared read cache is bypassed, as when the store does not answer.
      c.set("contentRevision", null);
      await next();
      return;
    }
    const { config, rateLimiter, caches, now } = c.get("deps");
    const key = c.get("apiKey");
    const projectId = c.get("project").id;
    const budget = budgetOf(c);
    // The default is synchronous: the hot path takes no extra turn of the event loop.
    const isRead = (typeof budget === "string" ? budget : await budget) === "read";
    const limit = budgetFor(config, key.kind, isRead);
    const { rate: result, revisions } = await rateLimiter.consumeReadingRevisions(
      `${key.id}:${isRead ? "read" : "write"}`,
      limit,
      WINDOW_SECONDS,
      projectId,
    );
    c.set("contentRevision", revisions?.content ?? null);
    if (revisions !== null && caches.seenLookupRevisions.changed(projectId, revisions.lookups)) {
      // An owner changed keys, settings, boards or voters since this app cached them (or this
      // app had not seen the project yet): drop the cached lookups, check the key again.
      caches.clearLookups();
      await reauthorizeFresh(c);
    }
    setResponseHeader(c, "X-RateLimit-Limit", String(result.limit));
    setResponseHeader(c, "X-RateLimit-Remaining", String(result.remaining));
    setResponseHeader(c, "X-RateLimit-Reset", String(result.resetAt));
    if (!result.allowed) {
      const retryAfter = Math.max(1, Math.ceil(result.resetAt - now().getTime() / 1000));
      throw new ApiError("rate_limited", `the ${isRead ? "read" : "write"} budget of ${limit} requests a minute is spent`, {
        headers: { "Retry-After": String(retryAfter) },
      });
    }
    await next();
  };
}
