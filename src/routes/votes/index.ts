/** Router of the votes area: .openapi(route, handler) for each route in votes.routes.ts. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./votes.handlers.ts";
import * as routes from "./votes.routes.ts";

export function createVotesRouter() {
  const router = createRouter();
  router.openapi(routes.castVote, handlers.castVote);
  router.openapi(routes.withdrawVote, handlers.withdrawVote);
  return router;
}
