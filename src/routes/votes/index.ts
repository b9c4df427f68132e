/** Router of the votes area: .openapi(route, handler) for each route in votes.routes.ts. */
import { createRouter } from "../../lib/openapi.ts";

export function createVotesRouter() {
  const router = createRouter();
  return router;
}
