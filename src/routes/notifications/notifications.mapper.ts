/** Inbox rows -> NotificationObject (engagement-api-v3.md, "Notifications (in-app inbox)"). */
import { rfc3339 } from "../../lib/http/timestamps.ts";
import type { NotificationRow } from "./notifications.repository.ts";
import type { NotificationObject } from "./notifications.schemas.ts";

const ID_PREFIX = "ntf_";
const MAX_BIGINT = 9223372036854775807n;

/** The public id of notification row `id` (bigint as a decimal string): `ntf_` + the digits. */
export function notificationId(id: string): string {
  return `${ID_PREFIX}${id}`;
}

/**
 * The row id (decimal string) a public id names, or null when `id` is not one (such ids name no
 * notification of anybody: the read route ignores them).
 */
export function notificationRowId(id: string): string | null {
  if (!/^ntf_[1-9][0-9]{0,18}$/.test(id)) return null;
  const digits = id.slice(ID_PREFIX.length);
  return BigInt(digits) <= MAX_BIGINT ? digits : null;
}

/**
 * The row as the API shows it. `type` and `data` are what the notification consumer recorded
 * together (src/events/notification-consumer.ts), so the pair is one member of the union.
 */
export function toNotificationObject(row: NotificationRow): NotificationObject {
  return {
    id: notificationId(row.id),
    type: row.type,
    feature: { id: row.feature_id, heading: row.feature_heading },
    data: typeof row.data === "string" ? (JSON.parse(row.data) as Record<string, unknown>) : row.data,
    read: row.read_at !== null,
    created_at: rfc3339(row.created_at),
  } as NotificationObject;
}
