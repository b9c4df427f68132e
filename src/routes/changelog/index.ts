/** Router of the changelog area: .openapi(route, handler) for each route in changelog.routes.ts and changelog.owner.routes.ts. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./changelog.handlers.ts";
import * as ownerHandlers from "./changelog.owner.handlers.ts";
import * as ownerRoutes from "./changelog.owner.routes.ts";
import * as routes from "./changelog.routes.ts";

export function createChangelogRouter() {
  const router = createRouter();
  router.openapi(routes.listReleases, handlers.listReleases);
  router.openapi(routes.getRelease, handlers.getRelease);
  router.openapi(ownerRoutes.adminListReleases, ownerHandlers.adminListReleases);
  router.openapi(ownerRoutes.adminCreateRelease, ownerHandlers.adminCreateRelease);
  router.openapi(ownerRoutes.adminGetRelease, ownerHandlers.adminGetRelease);
  router.openapi(ownerRoutes.adminUpdateRelease, ownerHandlers.adminUpdateRelease);
  router.openapi(ownerRoutes.adminDeleteRelease, ownerHandlers.adminDeleteRelease);
  return router;
}

// The release inserts and default slug an import reuses (src/routes/imports/writer/).
export { defaultReleaseSlug } from "./changelog.owner.handlers.ts";
export { findReleaseBySlug, insertRelease, replaceReleaseFeatures } from "./changelog.owner.repository.ts";
// Route definitions the MCP tool publish_release wraps.
export { adminGetRelease, adminUpdateRelease } from "./changelog.owner.routes.ts";
// What other areas may use: the owner's view of a release (events carry it).
export { AdminReleaseObject } from "./changelog.owner.schemas.ts";
