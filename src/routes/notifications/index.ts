/** Router of the notifications area: .openapi(route, handler) for each route in notifications.routes.ts. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./notifications.handlers.ts";
import * as routes from "./notifications.routes.ts";

export function createNotificationsRouter() {
  const router = createRouter();
  router.openapi(routes.listNotifications, handlers.listNotifications);
  router.openapi(routes.getUnreadNotificationCount, handlers.getUnreadNotificationCount);
  router.openapi(routes.markNotificationsRead, handlers.markNotificationsRead);
  return router;
}
