/** Router of the messages area: .openapi(route, handler) for each route in messages.routes.ts. */
import { createRouter } from "../../lib/openapi.ts";
import * as handlers from "./messages.handlers.ts";
import * as routes from "./messages.routes.ts";

export function createMessagesRouter() {
  const router = createRouter();
  router.openapi(routes.listMessages, handlers.listMessages);
  router.openapi(routes.dismissMessage, handlers.dismissMessage);
  return router;
}
