/** Router of the features area: .openapi(route, handler) for each route in features.routes.ts. */
import { createRouter } from "../../lib/openapi.ts";

export function createFeaturesRouter() {
  const router = createRouter();
  return router;
}
