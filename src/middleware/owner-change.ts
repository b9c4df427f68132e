/**
 * After a successful owner write (2xx to POST, PATCH or DELETE under /projects/{slug}/admin),
 * retires what every instance has cached about the project beyond its content (key lookups,
 * settings, board structure, anonymous voters with their ban flag, listing totals), so the change
 * is seen by the very next request anywhere (owner-api-v3.md, "Common rules", Rules 6-8): this
 * app's caches now, the others' through the NOTIFY on CACHE_CHANNEL (sent here after the commit,
 * or by the write's transaction when it set `cacheInvalidationSent`). The
 * content revision that retires cached answers is replaced by contentRevisionMiddleware, which
 * runs around this one.
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
    // A write that sent the NOTIFY in its own transaction (cacheInvalidationNotice) saves the
    // round trip; this app's listener skips that notice, so the clear happens here, once. Its
    // answers are left to the new content revision (contentRevisionMiddleware), as on the
    // other instances: each hot page is then rebuilt once in the cluster, not once per instance.
    if (c.get("cacheInvalidationSent") === true) caches.clearLookups();
    else await notifyCacheInvalidation(db, caches);
  };
}
