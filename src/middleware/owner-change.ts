/**
 * After a successful owner write (2xx to POST, PATCH or DELETE under /projects/{slug}/admin),
 * retires what every instance has cached about the project beyond its content (key lookups,
 * settings, board structure, anonymous voters with their ban flag, listing totals), so the change
 * is seen by the very next request anywhere (owner-api-v3.md, "Common rules", Rules 6-8): this
 * app's caches now, the others' through the NOTIFY on CACHE_CHANNEL sent here after the commit.
 * A write that set `lookupsUnchanged` (the edit of one feature) skips both: what it changed
 * follows the content revision, which contentRevisionMiddleware, around this one, replaces.
 */
import type { MiddlewareHandler } from "hono";
import { notifyCacheInvalidation } from "../lib/data/app-caches.ts";
import type { AppEnv } from "../lib/http/context.ts";

export function ownerChangeMiddleware(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    if (c.get("access") !== "owner" || c.req.method === "GET" || c.req.method === "HEAD") return;
    if (c.res.status < 200 || c.res.status >= 300) return;
    const { db, caches } = c.get("deps");
    // Left to the content revision, the edit's answers are rebuilt once in the cluster (not on
    // every instance a notice clears) and its keys, settings and boards are not looked up again.
    if (c.get("lookupsUnchanged") === true) return;
    await notifyCacheInvalidation(db, caches);
  };
}
