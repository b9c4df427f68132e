/**
 * 405 before authentication (contract, "Errors": 405 means the path does not take that
 * method). hono's methodNotAllowed middleware decides after the whole chain has run, so a
 * wrong method on a keyed path would first meet the key and identity checks (401). This check
 * runs first: when the path matches a route but none for this method, it answers 405 with an
 * Allow header. CORS preflights (OPTIONS) pass through.
 */
import type { Context, Hono, MiddlewareHandler } from "hono";
import { TrieRouter } from "hono/router/trie-router";
import type { AppEnv } from "../lib/http/context.ts";
import { failure } from "../lib/http/envelope.ts";
import { ApiError } from "../lib/http/errors.ts";

const RECENT_PATHS = 2048;

// biome-ignore lint/suspicious/noExplicitAny: any app's routes (hono's schema and base path generics play no part here)
export function methodCheckMiddleware(app: Hono<AppEnv, any, any>): MiddlewareHandler<AppEnv> {
  let router: TrieRouter<string[]> | undefined;

  // Built on first use: routes are registered after the middleware.
  const build = () => {
    const methodsByPath = new Map<string, Set<string>>();
    for (const route of app.routes) {
      if (route.method === "ALL") continue;
      const methods = methodsByPath.get(route.path) ?? new Set<string>();
      methods.add(route.method);
      if (route.method === "GET") methods.add("HEAD");
      methodsByPath.set(route.path, methods);
    }
    const built = new TrieRouter<string[]>();
    for (const [path, methods] of methodsByPath) built.add("ALL", path, [...methods]);
    return built;
  };

  // The methods of recently asked paths: a trie walk per request cost a cached read more than
  // this lookup. Bounded, since paths are the client's: emptied when full.
  const recent = new Map<string, ReadonlySet<string>>();
  const allowedAt = (path: string): ReadonlySet<string> => {
    const known = recent.get(path);
    if (known !== undefined) return known;
    router ??= build();
    const found = new Set<string>();
    for (const [methods] of router.match("ALL", path)[0]) for (const method of methods) found.add(method);
    if (recent.size >= RECENT_PATHS) recent.clear();
    recent.set(path, found);
    return found;
  };

  return async (c, next) => {
    if (c.req.method === "OPTIONS") return next();
    const allowed = allowedAt(c.req.path);
    if (allowed.size === 0 || allowed.has(c.req.method)) return next();
    return methodNotAllowed(c, [...allowed].join(", "));
  };
}

/** The 405 answer: method_not_allowed in the envelope, with the Allow header (`allow`: "GET, HEAD"). */
export function methodNotAllowed(c: Context<AppEnv>, allow: string): Response {
  return c.json(failure(new ApiError("method_not_allowed", `this path takes ${allow}`)), 405, { Allow: allow });
}
