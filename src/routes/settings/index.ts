/** Router of the settings area (owner routes): .openapi(route, handler) for each route. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./settings.owner.handlers.ts";
import * as routes from "./settings.owner.routes.ts";

export function createSettingsRouter() {
  const router = createRouter();
  router.openapi(routes.adminGetSettings, handlers.getSettings);
  router.openapi(routes.adminUpdateSettings, handlers.updateSettingsHandler);
  return router;
}
