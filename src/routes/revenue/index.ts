/** Router of the revenue area: .openapi(route, handler) for each route in revenue.routes.ts. */
import { createRouter } from "../../lib/http/router.ts";
import { listRevenueFeaturesHandler, listVotersHandler } from "./revenue.handlers.ts";
import { listRevenueFeatures, listVoters } from "./revenue.routes.ts";

export function createRevenueRouter() {
  const router = createRouter();
  router.openapi(listVoters, listVotersHandler);
  router.openapi(listRevenueFeatures, listRevenueFeaturesHandler);
  return router;
}
