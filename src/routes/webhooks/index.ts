/** Router of the webhooks area (owner routes): .openapi(route, handler) for each route. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./webhooks.owner.handlers.ts";
import * as routes from "./webhooks.owner.routes.ts";

export function createWebhooksRouter() {
  const router = createRouter();
  router.openapi(routes.adminListWebhooks, handlers.listWebhooksHandler);
  router.openapi(routes.adminCreateWebhook, handlers.createWebhookHandler);
  router.openapi(routes.adminGetWebhook, handlers.getWebhookHandler);
  router.openapi(routes.adminUpdateWebhook, handlers.updateWebhookHandler);
  router.openapi(routes.adminDeleteWebhook, handlers.deleteWebhookHandler);
  router.openapi(routes.adminRotateWebhookSecret, handlers.rotateWebhookSecretHandler);
  router.openapi(routes.adminTestWebhook, handlers.testWebhookHandler);
  router.openapi(routes.adminListDeliveries, handlers.listDeliveriesHandler);
  router.openapi(routes.adminRedeliver, handlers.redeliverHandler);
  return router;
}
