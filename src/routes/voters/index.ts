/** Router of the voters area (owner routes): .openapi(route, handler) for each route. */
import { createRouter } from "../../lib/http/router.ts";
import * as ownerHandlers from "./voters.owner.handlers.ts";
import * as ownerRoutes from "./voters.owner.routes.ts";

export function createVotersRouter() {
  const router = createRouter();
  router.openapi(ownerRoutes.adminListVoters, ownerHandlers.adminListVoters);
  router.openapi(ownerRoutes.adminGetVoter, ownerHandlers.adminGetVoter);
  router.openapi(ownerRoutes.adminUpdateVoter, ownerHandlers.adminUpdateVoter);
  router.openapi(ownerRoutes.adminDeleteVoter, ownerHandlers.adminDeleteVoter);
  return router;
}

// What other areas may use: reading and writing a voter's owner view (billing sync).
export { toAdminVoter } from "./voters.owner.mapper.ts";
export { findAdminVoter, writeVoterFields } from "./voters.owner.repository.ts";
export { AdminVoterObject } from "./voters.owner.schemas.ts";
