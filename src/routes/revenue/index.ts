/** Router of the revenue area: .openapi(route, handler) for each route in revenue.routes.ts. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./revenue.handlers.ts";
import * as routes from "./revenue.routes.ts";

export function createRevenueRouter() {
  const router = createRouter();
  router.openapi(routes.listVoters, handlers.listVoters);
  router.openapi(routes.listRevenueFeatures, handlers.listRevenueFeatures);
  return router;
}

// What other areas may use: the revenue view of a voter (the owner's AdminVoterObject extends it).
export { toRevenueVoter } from "./revenue.mapper.ts";
// The route definition the MCP tool revenue_by_feature wraps (its query is the tool's arguments).
export { listRevenueFeatures } from "./revenue.routes.ts";
export { RevenueVoterObject } from "./revenue.schemas.ts";
export { countVoters, selectVotersWithTier } from "./revenue.voters.repository.ts";
