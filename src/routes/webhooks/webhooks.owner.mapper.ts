/** Rows to WebhookObject and DeliveryObject (owner-api-v3.md, "Webhooks"). */
import { webhookObject } from "../../events/payload.ts";
import { rfc3339, rfc3339OrNull } from "../../lib/http/timestamps.ts";
import type { DeliveryRow, WebhookRow } from "./webhooks.owner.repository.ts";
import type { DeliveryObject, WebhookObject } from "./webhooks.owner.schemas.ts";

/** WebhookObject of `row` (the one mapping pings use too, src/events/payload.ts). */
export function toWebhook(row: WebhookRow): WebhookObject {
  return webhookObject(row);
}

/** The WebhookObject with its secret: the answers of create and rotate-secret only. */
export function toWebhookWithSecret(row: WebhookRow, secret: string): WebhookObject & { secret: string } {
  return { ...toWebhook(row), secret };
}

export function toDelivery(row: DeliveryRow): DeliveryObject {
  return {
    id: Number(row.id),
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    last_duration_ms: row.last_duration_ms,
    next_attempt_at: rfc3339OrNull(row.status === "pending" ? row.next_attempt_at : null),
    created_at: rfc3339(row.created_at),
  };
}
