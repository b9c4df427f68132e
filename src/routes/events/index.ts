/** Router of the events area (owner route GET /events): .openapi(route, handler). */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./events.owner.handlers.ts";
import * as routes from "./events.owner.routes.ts";

export function createEventsRouter() {
  const router = createRouter();
  router.openapi(routes.adminListEvents, handlers.adminListEvents);
  return router;
}
