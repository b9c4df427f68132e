/** Router of the features area: .openapi(route, handler) for each route in features.routes.ts. */
import { createRouter } from "../../lib/openapi.ts";
import * as handlers from "./features.handlers.ts";
import * as routes from "./features.routes.ts";

export function createFeaturesRouter() {
  const router = createRouter();
  router.openapi(routes.listFeatures, handlers.listFeatures);
  router.openapi(routes.getFeature, handlers.getFeature);
  router.openapi(routes.createFeature, handlers.createFeature);
  return router;
}
