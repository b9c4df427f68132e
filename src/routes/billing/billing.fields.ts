/**
 * The voter fields a billing event sets (owner-api-v3.md, "Billing sync", the table and the
 * paragraph below it). Pure: the repository reads the voter, asks for the fields after the
 * event, and writes only what differs.
 */
import type { BillingChange } from "./billing.schemas.ts";

/** The voter columns the billing sync owns (tier_id and the churn fields shared with the owner). */
export interface VoterBillingFields {
  subscription_id: string | null;
  subscription_status: string | null;
  subscribed_at: Date | null;
  trial_ends_at: Date | null;
  canceled_at: Date | null;
  tier_id: number | null;
  churned: boolean;
  churned_at: Date | null;
  churn_source: string | null;
  last_synced_at: Date | null;
}

/**
 * The voter's billing fields after `change`, given the fields before and `tierId`, the tier whose
 * price ids hold the change's price (undefined when none does: the tier stays).
 *
 * - subscription_id and last_synced_at (the event's time) are always set.
 * - A subscription event sets subscription_status (as sent), subscribed_at, canceled_at and
 *   trial_ends_at: each from the event alone, so that the newest event decides them whatever
 *   arrived before it.
 * - A subscription that ended records churned, churned_at (when it ended, else the event's time)
 *   and churn_source (the system). A live subscription reported by the same system that recorded
 *   the churn clears it (the customer came back); a manual churn is the owner's and stays.
 * - An invoice or transaction event carries no subscription state: for the same subscription the
 *   state stays; for another subscription the old one's state no longer describes the voter and
 *   is cleared (the next subscription event fills it).
 */
export function billingFieldsAfter(before: VoterBillingFields, change: BillingChange, tierId: number | undefined): VoterBillingFields {
  const sameSubscription = before.subscription_id === change.subscriptionId;
  const after: VoterBillingFields = {
    ...before,
    subscription_id: change.subscriptionId,
    tier_id: tierId ?? before.tier_id,
    last_synced_at: change.occurredAt,
  };
  const state = change.subscription;
  if (state === null) {
    if (!sameSubscription) {
      Object.assign(after, { subscription_status: null, subscribed_at: null, trial_ends_at: null, canceled_at: null });
    }
    return after;
  }
  after.subscription_status = state.status;
  after.subscribed_at = state.subscribedAt;
  after.canceled_at = state.canceledAt;
  after.trial_ends_at = state.trialEndsAt;
  if (state.ended) {
    after.churned = true;
    after.churned_at = state.endedAt ?? change.occurredAt;
    after.churn_source = change.system;
  } else if (before.churned && before.churn_source === change.system) {
    after.churned = false;
    after.churned_at = null;
    after.churn_source = null;
  }
  return after;
}

/** The fields of `after` that differ from `before` (dates compared by instant). */
export function changedFields(before: VoterBillingFields, after: VoterBillingFields): Partial<VoterBillingFields> {
  const changed: Partial<VoterBillingFields> = {};
  for (const key of Object.keys(after) as (keyof VoterBillingFields)[]) {
    const from = before[key];
    const to = after[key];
    const same = from instanceof Date && to instanceof Date ? from.getTime() === to.getTime() : from === to;
    if (!same) (changed as Record<string, unknown>)[key] = to;
  }
  return changed;
}
