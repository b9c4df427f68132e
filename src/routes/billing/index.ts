/** Router of the billing area (open webhook routes): .openapi(route, handler) for each route. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./billing.handlers.ts";
import * as routes from "./billing.routes.ts";

export function createBillingRouter() {
  const router = createRouter();
  router.openapi(routes.receiveStripeEvent, handlers.receiveStripeEvent);
  router.openapi(routes.receivePaddleEvent, handlers.receivePaddleEvent);
  return router;
}
