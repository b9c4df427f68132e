/**
 * Router of the events area (owner route GET /events): .openapi(route, handler); and the
 * description of the webhook deliveries (registerEventWebhooks).
 */
import { createRouter } from "../../lib/openapi.ts";
import * as handlers from "./events.owner.handlers.ts";
import * as routes from "./events.owner.routes.ts";

export { registerEventWebhooks, WEBHOOKS_TAG } from "./events.webhooks.ts";

export function createEventsRouter() {
  const router = createRouter();
  router.openapi(routes.adminListEvents, handlers.adminListEvents);
  return router;
}
