/**
 * Response headers that are the same on every answer: hono's secure headers (computed once by
 * its secureHeaders middleware), X-API-Version, Access-Control-Expose-Headers and Vary: Origin.
 *
 * Under @hono/node-server they are written straight onto Node's ServerResponse before the route
 * runs, instead of through hono's Headers objects: undici's Headers checks every name and value
 * on each set, and secureHeaders sets eleven of them after every handler. Measured on the board
 * document (bench, cached): server CPU 0.19-0.21 -> 0.15 ms per request without that work.
 * Node merges them under the headers the response itself carries, so a header a route sets
 * wins, as with secureHeaders' own no-overwrite rule. Outside Node (in-process requests, as in
 * the tests) they are set as hono prepared headers instead: same headers, same precedence.
 * The hit path before the app (src/middleware/early-hit.ts) writes the same list (apiStaticHeaders).
 */
import { Hono, type MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";
import type { AppEnv } from "../lib/http/context.ts";
import { nodeResponse } from "../lib/runtime/runtime-adapter.ts";
import { EXPOSED_HEADERS } from "./cors.ts";

type SecureHeadersOptions = Parameters<typeof secureHeaders>[0];

/**
 * The headers hono's secureHeaders(options) adds to a response, read by running it once on a
 * probe app. Only options without per-request values (no CSP nonce) give a static set.
 */
export async function secureHeaderValues(options: SecureHeadersOptions): Promise<[string, string][]> {
  const probe = new Hono().use(secureHeaders(options)).get("/", (c) => c.body(null, 204));
  const response = await probe.request("/");
  return [...response.headers];
}

/**
 * The API's static headers, in the order they are written: hono's secure headers (with
 * `Cross-Origin-Resource-Policy: cross-origin`), X-API-Version, Access-Control-Expose-Headers
 * and Vary: Origin.
 */
export async function apiStaticHeaders(): Promise<[string, string][]> {
  return [
    ...(await secureHeaderValues({ crossOriginResourcePolicy: "cross-origin" })),
    ["X-API-Version", "3"],
    // What hono's cors adds to every answer but a preflight (which gets cors's own headers);
    // Access-Control-Allow-Origin itself depends on the key (src/middleware/cors.ts).
    ["Access-Control-Expose-Headers", EXPOSED_HEADERS.join(",")],
    ["Vary", "Origin"],
  ];
}

const staticHeaderNames = new Set<string>();

/**
 * Whether `name` (lower case) is one of the static headers: a 304 keeps them (read-cache.ts),
 * so in-process answers match the Node path, where they are already on the ServerResponse.
 */
export function isStaticHeader(name: string): boolean {
  return staticHeaderNames.has(name);
}

/** Adds `headers` (resolved once) to every response; see the module comment. */
export function staticHeadersMiddleware(headers: Promise<[string, string][]>): MiddlewareHandler<AppEnv> {
  let resolved: [string, string][] | undefined;
  const ready = headers.then((list) => {
    for (const [name] of list) staticHeaderNames.add(name.toLowerCase());
    resolved = list;
  });
  return async (c, next) => {
    if (resolved === undefined) await ready;
    const outgoing = nodeResponse(c);
    if (outgoing !== undefined && !outgoing.headersSent) {
      for (const [name, value] of resolved!) outgoing.setHeader(name, value);
    } else {
      for (const [name, value] of resolved!) c.header(name, value);
    }
    await next();
  };
}
