/**
 * X-Request-Id on every answer (contract, "Endpoints": every response carries it), and the log
 * record of each answer under it (logRequest). The id is the client's own X-Request-Id when it
 * is at most 255 word characters, `-` or `=` (hono's requestId rule, requestIdOf), else a random
 * UUID. Kept as c.get("requestId") for the log. Set through
 * setResponseHeader (src/lib/runtime/runtime-adapter.ts): under Node it goes straight onto the
 * ServerResponse instead of into a hono Headers object.
 */
import { randomUUID } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { Logger } from "pino";
import type { AppEnv } from "../lib/http/context.ts";
import { setResponseHeader } from "../lib/runtime/runtime-adapter.ts";

const MAX_LENGTH = 255;
const OUTSIDE_ALPHABET = /[^\w\-=]/;

/** The id of a request that sent X-Request-Id `sent` (undefined: none): `sent` when it follows the rule, else a new one. */
export function requestIdOf(sent: string | undefined): string {
  return !sent || sent.length > MAX_LENGTH || OUTSIDE_ALPHABET.test(sent) ? randomUUID() : sent;
}

export function requestIdMiddleware(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const id = requestIdOf(c.req.header("X-Request-Id"));
    c.set("requestId", id);
    setResponseHeader(c, "X-Request-Id", id);
    await next();
  };
}

/**
 * The one `request` log record of an answer (method, path, status, ms since `started`, a
 * performance.now() reading), under its request id: the app's and the hit path's before it.
 */
export function logRequest(logger: Logger, requestId: string, method: string, path: string, status: number, started: number): void {
  logger.info({ req_id: requestId, method, path, status, ms: Math.round((performance.now() - started) * 10) / 10 }, "request");
}
