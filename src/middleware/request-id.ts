/**
 * X-Request-Id on every answer (contract, "Endpoints": every response carries it): the
 * client's own X-Request-Id when it is at most 255 word characters, `-` or `=` (hono's requestId
 * rule), else a random UUID. Kept as c.get("requestId") for the log. Set through
 * setResponseHeader (src/lib/runtime/runtime-adapter.ts): under Node it goes straight onto the
 * ServerResponse instead of into a hono Headers object.
 */
import { randomUUID } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../lib/http/context.ts";
import { setResponseHeader } from "../lib/runtime/runtime-adapter.ts";

const MAX_LENGTH = 255;
const OUTSIDE_ALPHABET = /[^\w\-=]/;

export function requestIdMiddleware(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    let id = c.req.header("X-Request-Id");
    if (!id || id.length > MAX_LENGTH || OUTSIDE_ALPHABET.test(id)) id = randomUUID();
    c.set("requestId", id);
    setResponseHeader(c, "X-Request-Id", id);
    await next();
  };
}
