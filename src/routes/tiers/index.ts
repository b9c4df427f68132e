/** Router of the tiers area (owner routes): .openapi(route, handler) for each route. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./tiers.owner.handlers.ts";
import * as routes from "./tiers.owner.routes.ts";

export function createTiersRouter() {
  const router = createRouter();
  router.openapi(routes.adminListTiers, handlers.listTiersHandler);
  router.openapi(routes.adminCreateTier, handlers.createTierHandler);
  router.openapi(routes.adminUpdateTier, handlers.updateTierHandler);
  router.openapi(routes.adminDeleteTier, handlers.deleteTierHandler);
  return router;
}
