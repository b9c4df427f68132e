/** Router of the revenue area: .openapi(route, handler) for each route in revenue.routes.ts. */
import { createRouter } from "../../lib/openapi.ts";

export function createRevenueRouter() {
  const router = createRouter();
  return router;
}
