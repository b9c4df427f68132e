/** Router of the tiers area (owner routes): .openapi(route, handler) for each route. */
import { createRouter } from "../../lib/http/router.ts";
import * as ownerHandlers from "./tiers.owner.handlers.ts";
import * as ownerRoutes from "./tiers.owner.routes.ts";

export function createTiersRouter() {
  const router = createRouter();
  router.openapi(ownerRoutes.adminListTiers, ownerHandlers.adminListTiers);
  router.openapi(ownerRoutes.adminCreateTier, ownerHandlers.adminCreateTier);
  router.openapi(ownerRoutes.adminUpdateTier, ownerHandlers.adminUpdateTier);
  router.openapi(ownerRoutes.adminDeleteTier, ownerHandlers.adminDeleteTier);
  return router;
}
