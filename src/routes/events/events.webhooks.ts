/**
 * The deliveries a webhook receives, as the `webhooks` of the OpenAPI 3.1 description
 * (owner-api-v3.md, "Webhooks"): one entry per event type and `ping`, each the POST the
 * receiver gets, so that generated clients have a type for every payload. Description only:
 * the delivery worker (src/events) sends them.
 */

import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../lib/http/context.ts";
import { EVENT_SCHEMAS, eventSchemaName, type WebhookEventType } from "./events.owner.schemas.ts";

/** Tag of the webhook entries (declared with the document's tags). */
export const WEBHOOKS_TAG = "Webhooks";

/** The Standard Webhooks headers of every delivery. */
const DeliveryHeaders = z.object({
  "webhook-id": z.string().openapi({
    description: "The event id (`evt_`, a ping's too); the same at every attempt of the delivery, so receivers can drop duplicates",
    example: "evt_00000000000fw00000000000q",
  }),
  "webhook-timestamp": z
    .number()
    .int()
    .openapi({ description: "When this attempt was signed, Unix time in seconds; refuse one far from your clock", example: 1795867200 }),
  "webhook-signature": z.string().openapi({
    description:
      'Space-separated `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`, keyed by the decoded bytes of ' +
      "the webhook's secret (after `whsec_`); for 24 hours after a rotation both secrets sign. Any one matching authenticates the body",
    example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
  }),
});

/**
 * Registers in `registry` (the app's, so the entries are not prefixed with /api/v3) the POST of
 * each event type to a webhook: body that type's EventObject, headers those of Standard Webhooks,
 * and what the receiver's answer means (retry schedule, 410).
 */
export function registerEventWebhooks(registry: OpenAPIHono<AppEnv>["openAPIRegistry"]): void {
  for (const [type, schema] of Object.entries(EVENT_SCHEMAS) as [WebhookEventType, z.ZodType][]) {
    registry.registerWebhook({
      method: "post",
      path: type,
      operationId: `${eventSchemaName(type).charAt(0).toLowerCase()}${eventSchemaName(type).slice(1)}Webhook`,
      summary: `${type} delivery`,
      description:
        type === "ping"
          ? "What POST /webhooks/{webhook_id}/test sends: a ping, whatever the webhook's events filter; made once, never retried."
          : `Sent to every enabled webhook whose events list ${type} (or is empty), at least once; order between events is ` +
            "not guaranteed. Verify webhook-signature over the raw body before parsing it.",
      tags: [WEBHOOKS_TAG],
      // Authenticated by webhook-signature, not by a key of this API.
      security: [],
      request: {
        headers: DeliveryHeaders,
        body: { required: true, content: { "application/json": { schema } }, description: `The ${type} EventObject` },
      },
      responses: {
        "2XX": { description: "Delivered: any 2xx answer within 15 s" },
        410: { description: "Gone: the webhook is disabled at once (disabled_reason gone)" },
        default: {
          description:
            "Anything else, a redirect or no answer within 15 s included: the attempt failed and is retried after about 5 s, " +
            "5 min, 30 min, 2 h, 5 h, 10 h and 10 h (with jitter), then the delivery is failed; 100 failed deliveries in a row " +
            "disable the webhook (disabled_reason failing)",
        },
      },
    });
  }
}
