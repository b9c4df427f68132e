/** Router of the webhooks area (owner routes): .openapi(route, handler) for each route. */
import { createRouter } from "../../lib/http/router.ts";
import * as ownerHandlers from "./webhooks.owner.handlers.ts";
import * as ownerRoutes from "./webhooks.owner.routes.ts";

export function createWebhooksRouter() {
  const router = createRouter();
  router.openapi(ownerRoutes.adminListWebhooks, ownerHandlers.adminListWebhooks);
  router.openapi(ownerRoutes.adminCreateWebhook, ownerHandlers.adminCreateWebhook);
  router.openapi(ownerRoutes.adminGetWebhook, ownerHandlers.adminGetWebhook);
  router.openapi(ownerRoutes.adminUpdateWebhook, ownerHandlers.adminUpdateWebhook);
  router.openapi(ownerRoutes.adminDeleteWebhook, ownerHandlers.adminDeleteWebhook);
  router.openapi(ownerRoutes.adminRotateWebhookSecret, ownerHandlers.adminRotateWebhookSecret);
  router.openapi(ownerRoutes.adminTestWebhook, ownerHandlers.adminTestWebhook);
  router.openapi(ownerRoutes.adminListDeliveries, ownerHandlers.adminListDeliveries);
  router.openapi(ownerRoutes.adminRedeliver, ownerHandlers.adminRedeliver);
  return router;
}

// What other areas may use: the webhook as a ping carries it.
export { WebhookObject } from "./webhooks.owner.schemas.ts";
