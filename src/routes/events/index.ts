/** Router of the events area (owner route GET /events): .openapi(route, handler). */
import { createRouter } from "../../lib/http/router.ts";
import * as ownerHandlers from "./events.owner.handlers.ts";
import * as ownerRoutes from "./events.owner.routes.ts";

export function createEventsRouter() {
  const router = createRouter();
  router.openapi(ownerRoutes.adminListEvents, ownerHandlers.adminListEvents);
  return router;
}
