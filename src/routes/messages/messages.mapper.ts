/** Message rows -> MessageObject (contract) and AdminMessageObject (owner-api-v3.md, Objects). */
import { rfc3339, rfc3339OrNull } from "../../lib/http/timestamps.ts";
import type { AdminMessageRow, MessageRow } from "./messages.repository.ts";
import type { AdminMessageObject, MessageObject } from "./messages.schemas.ts";

/** Maps a message row to MessageObject; action_label is withheld when there is no action_url. */
export function toMessageObject(row: MessageRow): MessageObject {
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    kind: row.kind,
    // The column has no CHECK; its writers (the snapshot importer, the owner routes) accept
    // banner or alert only.
    presentation: row.presentation as MessageObject["presentation"],
    priority: row.priority,
    action_label: row.action_url === null ? null : row.action_label,
    action_url: row.action_url,
    is_dismissible: row.is_dismissible,
    starts_at: rfc3339OrNull(row.starts_at),
    ends_at: rfc3339OrNull(row.ends_at),
    created_at: rfc3339(row.created_at),
    updated_at: rfc3339(row.updated_at),
  };
}

/** MessageObject plus the targeting fields and the number of voters who dismissed it. */
export function toAdminMessageObject(row: AdminMessageRow): AdminMessageObject {
  return {
    ...toMessageObject(row),
    platforms: row.platforms,
    min_app_version: row.min_app_version,
    max_app_version: row.max_app_version,
    dismissal_count: row.dismissal_count,
  };
}
