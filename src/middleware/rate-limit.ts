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
 * not counted again: the call was counted once, by the request that made it. Likewise a request
 * the hit path before the app (src/middleware/early-hit.ts) counted and then handed to the app
 * (handOverCount): the app takes that count instead of making its own.
 */
import type { IncomingMessage } from "node:http";
import type { Context, MiddlewareHandler } from "hono";
import type { Config } from "../config.ts";
import type { ApiKeyContext, AppDeps, AppEnv } from "../lib/http/context.ts";
import { ApiError } from "../lib/http/errors.ts";
import { nodeRequest, setResponseHeader } from "../lib/runtime/runtime-adapter.ts";
import type { ProjectRevisions, RateLimitResult } from "../store/store.types.ts";
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

/** One request counted against its key's budget, and the project's revisions read with it. */
export interface CountedRequest {
  bucket: string;
  projectId: number;
  limit: number;
  rate: RateLimitResult;
  /** null when the shared store did not answer (the count then came from the fallback). */
  revisions: ProjectRevisions | null;
}

/**
 * Counts a request of `key` against its budget (`isRead`: the read budget, else the write one)
 * and reads the project's content and lookups revisions, in one round trip of the rate limiter.
 */
export async function countRequest(
  deps: Pick<AppDeps, "config" | "rateLimiter">,
  key: ApiKeyContext,
  projectId: number,
  isRead: boolean,
): Promise<CountedRequest> {
  const bucket = `${key.id}:${isRead ? "read" : "write"}`;
  const limit = budgetFor(deps.config, key.kind, isRead);
  const { rate, revisions } = await deps.rateLimiter.consumeReadingRevisions(bucket, limit, WINDOW_SECONDS, projectId);
  return { bucket, projectId, limit, rate, revisions };
}

/** The X-RateLimit-Limit, -Remaining and -Reset values of a count. */
export function rateHeaderValues(rate: RateLimitResult): [limit: string, remaining: string, reset: string] {
  return [String(rate.limit), String(rate.remaining), String(rate.resetAt)];
}

/** Sets X-RateLimit-Limit, -Remaining and -Reset of `rate` on the answer. */
function setRateHeaders(c: Context<AppEnv>, rate: RateLimitResult): void {
  const [limitValue, remaining, reset] = rateHeaderValues(rate);
  setResponseHeader(c, "X-RateLimit-Limit", limitValue);
  setResponseHeader(c, "X-RateLimit-Remaining", remaining);
  setResponseHeader(c, "X-RateLimit-Reset", reset);
}

/**
 * Counts a request refused before the rate step although it carries `key`, a valid key of the
 * project `projectId` (its own budgets: an embed key's are the embed ones), against `budget`, and
 * sets the rate headers on the refusal. The refusal stands whatever the count says (no 429 in
 * its place). For the MCP endpoint, whose contract puts the rate headers on every answer to a
 * request carrying a valid key of the project (engagement-api-v3.md, "MCP endpoint").
 */
export async function countRefusedRequest(c: Context<AppEnv>, key: ApiKeyContext, projectId: number, budget: Budget): Promise<void> {
  const counted = await countRequest(c.get("deps"), key, projectId, budget === "read");
  setRateHeaders(c, counted.rate);
}

const HANDED_OVER = Symbol("request counted before the app");

/**
 * Leaves `counted` on Node's request for the app's rate step, which then takes it instead of
 * counting the request again: the hit path before the app counted it, then found it no hit.
 */
export function handOverCount(incoming: IncomingMessage, counted: CountedRequest): void {
  (incoming as IncomingMessage & { [HANDED_OVER]?: CountedRequest })[HANDED_OVER] = counted;
}

/** The count handed over for this request, once, if it is of `bucket` and `projectId`. */
function takeHandedOver(c: Context<AppEnv>, bucket: string, projectId: number): CountedRequest | undefined {
  const incoming = nodeRequest(c) as (IncomingMessage & { [HANDED_OVER]?: CountedRequest }) | undefined;
  const counted = incoming?.[HANDED_OVER];
  if (counted === undefined) return undefined;
  delete incoming![HANDED_OVER];
  // The app found the same key (by its digest) and project as the hit path, so the buckets agree.
  return counted.bucket === bucket && counted.projectId === projectId ? counted : undefined;
}

/** The hono bindings of an in-process request whose budget its caller already counted. */
export interface RateCountedBindings {
  rateCounted: true;
}

function countedByCaller(c: Context<AppEnv>): boolean {
  return (c.env as Partial<RateCountedBindings> | undefined)?.rateCounted === true;
}

/** The default budget of a request: GET and HEAD are reads, every other method a write. */
export function budgetByMethod(c: Context<AppEnv>): Budget {
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
    const deps = c.get("deps");
    const { caches, now } = deps;
    const key = c.get("apiKey");
    const projectId = c.get("project").id;
    const budget = budgetOf(c);
    // The default is synchronous: the hot path takes no extra turn of the event loop.
    const isRead = (typeof budget === "string" ? budget : await budget) === "read";
    const counted =
      takeHandedOver(c, `${key.id}:${isRead ? "read" : "write"}`, projectId) ?? (await countRequest(deps, key, projectId, isRead));
    const { rate: result, revisions, limit } = counted;
    c.set("contentRevision", revisions?.content ?? null);
    if (revisions !== null && caches.seenLookupRevisions.changed(projectId, revisions.lookups)) {
      // An owner changed keys, settings, boards or voters since this app cached them (or this
      // app had not seen the project yet): drop the cached lookups, check the key again.
      caches.clearLookups();
      await reauthorizeFresh(c);
    }
    setRateHeaders(c, result);
    if (!result.allowed) {
      const retryAfter = Math.max(1, Math.ceil(result.resetAt - now().getTime() / 1000));
      throw new ApiError("rate_limited", `the ${isRead ? "read" : "write"} budget of ${limit} requests a minute is spent`, {
        headers: { "Retry-After": String(retryAfter) },
      });
    }
    await next();
  };
}
