/** Router of the billing area (open webhook routes): .openapi(route, handler) for each route. */
import { createRouter } from "../../lib/http/router.ts";
import { receivePaddleEventHandler, receiveStripeEventHandler } from "./billing.handlers.ts";
import { receivePaddleEvent, receiveStripeEvent } from "./billing.routes.ts";

export function createBillingRouter() {
  const router = createRouter();
  router.openapi(receiveStripeEvent, receiveStripeEventHandler);
  router.openapi(receivePaddleEvent, receivePaddleEventHandler);
  return router;
}
