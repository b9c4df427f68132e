/**
 * Mounts every area router under the API prefix (the billing webhooks are open routes, outside
 * the keyed chain) and describes the webhook deliveries.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../lib/http/context.ts";
import { createBillingRouter } from "./billing/index.ts";
import { createBoardRouter } from "./board/index.ts";
import { createChangelogRouter } from "./changelog/index.ts";
import { createCommentsRouter } from "./comments/index.ts";
import { createEmailsRouter } from "./emails/index.ts";
import { createEventsRouter, registerEventWebhooks } from "./events/index.ts";
import { createFeaturesRouter } from "./features/index.ts";
import { createFeedsRouter } from "./feeds/index.ts";
import { createIdentityRouter } from "./identity/index.ts";
import { createImportsRouter } from "./imports/index.ts";
import { createKeysRouter } from "./keys/index.ts";
import { createMcpRouter } from "./mcp/index.ts";
import { createMessagesRouter } from "./messages/index.ts";
import { createNotificationsRouter } from "./notifications/index.ts";
import { createRevenueRouter } from "./revenue/index.ts";
import { createSettingsRouter } from "./settings/index.ts";
import { createSubscriptionsRouter } from "./subscriptions/index.ts";
import { createTagsRouter } from "./tags/index.ts";
import { createTiersRouter } from "./tiers/index.ts";
import { createVotersRouter } from "./voters/index.ts";
import { createVotesRouter } from "./votes/index.ts";
import { createWebhooksRouter } from "./webhooks/index.ts";

export function registerApiRouters(app: OpenAPIHono<AppEnv>, prefix: string): void {
  app.route(prefix, createBoardRouter());
  app.route(prefix, createFeaturesRouter());
  app.route(prefix, createVotesRouter());
  app.route(prefix, createCommentsRouter());
  app.route(prefix, createChangelogRouter());
  app.route(prefix, createMessagesRouter());
  app.route(prefix, createIdentityRouter());
  app.route(prefix, createRevenueRouter());
  app.route(prefix, createVotersRouter());
  app.route(prefix, createTiersRouter());
  app.route(prefix, createSettingsRouter());
  app.route(prefix, createKeysRouter());
  app.route(prefix, createTagsRouter());
  app.route(prefix, createBillingRouter());
  app.route(prefix, createWebhooksRouter());
  app.route(prefix, createImportsRouter());
  app.route(prefix, createEventsRouter());
  app.route(prefix, createEmailsRouter());
  app.route(prefix, createFeedsRouter());
  app.route(prefix, createNotificationsRouter());
  app.route(prefix, createSubscriptionsRouter());
  app.route(prefix, createMcpRouter({ dispatch: (request, bindings) => app.fetch(request, bindings), prefix }));
  // On the app's own registry: a sub-router's webhooks would be keyed under the prefix.
  registerEventWebhooks(app.openAPIRegistry);
}
