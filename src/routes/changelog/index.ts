/** Router of the changelog area: .openapi(route, handler) for each route in changelog.routes.ts. */
import { createRouter } from "../../lib/openapi.ts";
import * as handlers from "./changelog.handlers.ts";
import * as routes from "./changelog.routes.ts";

export function createChangelogRouter() {
  const router = createRouter();
  router.openapi(routes.listReleases, handlers.listReleases);
  router.openapi(routes.getRelease, handlers.getRelease);
  return router;
}
