/** Router of the messages area: .openapi(route, handler) for each route in messages.routes.ts and messages.owner.routes.ts. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./messages.handlers.ts";
import * as ownerHandlers from "./messages.owner.handlers.ts";
import * as ownerRoutes from "./messages.owner.routes.ts";
import * as routes from "./messages.routes.ts";

export function createMessagesRouter() {
  const router = createRouter();
  router.openapi(routes.listMessages, handlers.listMessages);
  router.openapi(routes.dismissMessage, handlers.dismissMessage);
  router.openapi(ownerRoutes.adminListMessages, ownerHandlers.adminListMessages);
  router.openapi(ownerRoutes.adminCreateMessage, ownerHandlers.adminCreateMessage);
  router.openapi(ownerRoutes.adminGetMessage, ownerHandlers.adminGetMessage);
  router.openapi(ownerRoutes.adminUpdateMessage, ownerHandlers.adminUpdateMessage);
  router.openapi(ownerRoutes.adminDeleteMessage, ownerHandlers.adminDeleteMessage);
  return router;
}
