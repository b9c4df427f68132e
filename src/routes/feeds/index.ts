/**
 * Router of the feeds area: .openapi(route, handler) for each route in feeds.routes.ts, the
 * security scheme of the `key` query parameter, and the paths the app marks as feed routes
 * (access "feed": the only ones taking the embed key as ?key=, src/middleware/api-key.ts).
 */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./feeds.handlers.ts";
import * as routes from "./feeds.routes.ts";

/** The feed routes' paths under the API prefix, in hono's syntax. */
export const FEED_PATHS = ["/projects/:slug/changelog.atom", "/projects/:slug/roadmap.atom"] as const;

export function createFeedsRouter() {
  const router = createRouter();
  router.openAPIRegistry.registerComponent("securitySchemes", "EmbedKeyQuery", routes.EMBED_KEY_QUERY_SCHEME);
  router.openapi(routes.getChangelogFeed, handlers.getChangelogFeed);
  router.openapi(routes.getRoadmapFeed, handlers.getRoadmapFeed);
  return router;
}
