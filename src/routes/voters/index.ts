/** Router of the voters area (owner routes): .openapi(route, handler) for each route. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./voters.owner.handlers.ts";
import * as routes from "./voters.owner.routes.ts";

export function createVotersRouter() {
  const router = createRouter();
  router.openapi(routes.adminListVoters, handlers.listVoters);
  router.openapi(routes.adminGetVoter, handlers.getVoter);
  router.openapi(routes.adminUpdateVoter, handlers.updateVoterHandler);
  router.openapi(routes.adminDeleteVoter, handlers.deleteVoter);
  return router;
}

// What other areas may use: reading and writing a voter's owner view (billing sync).
export { toAdminVoter } from "./voters.mapper.ts";
export { findAdminVoter, writeVoterFields } from "./voters.owner.repository.ts";
