/** Rows to EmailObject (engagement-api-v3.md, "Email notifications"). */
import { rfc3339, rfc3339OrNull } from "../../lib/http/timestamps.ts";
import type { EmailLogRow } from "./emails.owner.repository.ts";
import type { EmailObject } from "./emails.owner.schemas.ts";

/** A notification's public id: `ntf_` and its row id (engagement-api-v3.md, NotificationObject). */
export function notificationPublicId(id: string): string {
  return `ntf_${id}`;
}

export function toEmail(row: EmailLogRow): EmailObject {
  return {
    id: Number(row.id),
    voter_id: row.voter_public_id,
    to: row.to_address,
    subject: row.subject,
    notification_ids: row.notification_ids.map(notificationPublicId),
    status: row.status,
    attempts: row.attempts,
    last_error: row.last_error,
    sent_at: rfc3339OrNull(row.sent_at),
    created_at: rfc3339(row.created_at),
  };
}
