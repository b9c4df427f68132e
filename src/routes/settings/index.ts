/** Router of the settings area (owner routes): .openapi(route, handler) for each route. */
import { createRouter } from "../../lib/http/router.ts";
import * as ownerHandlers from "./settings.owner.handlers.ts";
import * as ownerRoutes from "./settings.owner.routes.ts";

export function createSettingsRouter() {
  const router = createRouter();
  router.openapi(ownerRoutes.adminGetSettings, ownerHandlers.adminGetSettings);
  router.openapi(ownerRoutes.adminUpdateSettings, ownerHandlers.adminUpdateSettings);
  return router;
}
