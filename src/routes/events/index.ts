/**
 * Router of the events area (owner route GET /events): .openapi(route, handler); and the
 * description of the webhook deliveries (registerEventWebhooks).
 */
import { createRouter } from "../../lib/http/router.ts";
import * as ownerHandlers from "./events.owner.handlers.ts";
import * as ownerRoutes from "./events.owner.routes.ts";

export { registerEventWebhooks, WEBHOOKS_TAG } from "./events.webhooks.ts";

export function createEventsRouter() {
  const router = createRouter();
  router.openapi(ownerRoutes.adminListEvents, ownerHandlers.adminListEvents);
  return router;
}

// The route definition the MCP tool list_events wraps (its query is the tool's arguments).
export { adminListEvents } from "./events.owner.routes.ts";
