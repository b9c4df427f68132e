/**
 * verifyWebhook: a webhook delivery checked by the Standard Webhooks rules (docs/contract/owner-api-v3.md,
 * "Webhooks"; docs/contract/clients-v3.md, "The TypeScript client": "Webhooks").
 */
import { Webhook } from "standardwebhooks";
import type { EventObject, PingEvent } from "./generated/types.gen.js";

/** What a delivery carries: an event of the feed, or the ping of POST /webhooks/{id}/test. */
export type WebhookEvent = EventObject | PingEvent;

/**
 * The event of a delivery: `payload` is the raw request body (as received, before any JSON
 * parsing), `headers` the request's headers (webhook-id, webhook-timestamp, webhook-signature),
 * `secret` the webhook's `whsec_` secret. Throws (standardwebhooks' WebhookVerificationError) when
 * the signature does not match any of the signatures sent, or the timestamp is more than five
 * minutes away from now.
 */
export function verifyWebhook(
  payload: string | Uint8Array,
  headers: Headers | Record<string, string | string[] | undefined>,
  secret: string,
): WebhookEvent {
  const flat: Record<string, string> = {};
  if (typeof (headers as Headers).forEach === "function" && typeof (headers as Headers).get === "function") {
    (headers as Headers).forEach((value, name) => {
      flat[name.toLowerCase()] = value;
    });
  } else {
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(" ") : value;
    }
  }
  const body = typeof payload === "string" ? payload : new TextDecoder().decode(payload);
  return new Webhook(secret).verify(body, flat) as WebhookEvent;
}
