/**
 * Guard of the revenue routes (contract, "Authentication" 3 and "Revenue"): the embed key is
 * published in page source, so revenue figures are served to the secret key only.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../lib/http/context.ts";
import { ApiError } from "../../lib/http/errors.ts";

/**
 * Route middleware that refuses any key but the secret key with 403 not_allowed. It runs
 * before query validation so an embed key learns nothing about the route's parameters.
 * The PRO-plan check is the key middleware's (also not_allowed).
 */
export function secretKeyOnly(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.get("apiKey")?.kind !== "secret") {
      throw new ApiError("not_allowed", "revenue routes accept the secret key only, never the embed key");
    }
    await next();
  };
}
