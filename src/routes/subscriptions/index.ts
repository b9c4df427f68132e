/** Router of the subscriptions area: .openapi(route, handler) for each route in subscriptions.routes.ts. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./subscriptions.handlers.ts";
import * as routes from "./subscriptions.routes.ts";

export function createSubscriptionsRouter() {
  const router = createRouter();
  router.openapi(routes.listSubscriptions, handlers.listSubscriptions);
  router.openapi(routes.subscribeToFeature, handlers.subscribeToFeature);
  router.openapi(routes.unsubscribeFromFeature, handlers.unsubscribeFromFeature);
  return router;
}
