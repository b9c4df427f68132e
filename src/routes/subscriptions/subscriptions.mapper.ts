/** Subscription rows -> SubscriptionObject (engagement-api-v3.md, "Subscriptions"). */
import { rfc3339 } from "../../lib/http/timestamps.ts";
import type { SubscriptionRow } from "./subscriptions.repository.ts";
import type { SubscriptionObject } from "./subscriptions.schemas.ts";

/** A stored subscription -> SubscriptionObject (`feature` as FeatureRef, `created_at` RFC 3339 UTC). */
export function toSubscriptionObject(row: SubscriptionRow): SubscriptionObject {
  return { feature: { id: row.feature_id, heading: row.heading }, reason: row.reason, created_at: rfc3339(row.created_at) };
}
