/**
 * The voter events of owner-api-v3.md ("Events") from a voter's AdminVoterObject before and
 * after a change: voter.banned / voter.unbanned, and voter.billing_changed when a tier, MRR,
 * subscription or churn field changed (by an owner's PATCH /voters/{voter_id} or by billing sync:
 * both call voterChangeEvents with the objects read in the change's transaction).
 */
import { changesBetween } from "./changes.ts";
import type { NewEvent } from "./outbox.ts";

/** The AdminVoterObject fields the voter events look at. */
export interface VoterEventView {
  banned: boolean;
  tier: { id: number } | null;
  [field: string]: unknown;
}

/**
 * The fields of voter.billing_changed's `changes`: the tier (as its id, a reference), the MRR
 * (the override and the resulting mrr_cents / mrr_source), the subscription and the churn record.
 * last_synced_at and the customer ids are not among them: a sync that only refreshes them, or
 * links a customer, changes nothing the event describes.
 */
export const BILLING_FIELDS = [
  "tier",
  "mrr_override_cents",
  "mrr_cents",
  "mrr_source",
  "subscription_id",
  "subscription_status",
  "subscribed_at",
  "trial_ends_at",
  "canceled_at",
  "churned",
  "churned_at",
  "churn_source",
] as const;

function billingView(voter: VoterEventView): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  for (const field of BILLING_FIELDS) view[field] = field === "tier" ? (voter.tier?.id ?? null) : voter[field];
  return view;
}

/**
 * Events of a change to voter `after` (was `before`; both AdminVoterObjects): voter.banned or
 * voter.unbanned with `changes.banned`, then voter.billing_changed with every billing field that
 * differs. Nothing when neither changed (other fields, e.g. display_name, record no event).
 * `voterId` is the voter's internal id: the events' subject, scrubbed by its erasure.
 */
export function voterChangeEvents<V extends VoterEventView>(before: V, after: V, voterId: number): NewEvent[] {
  const events: NewEvent[] = [];
  if (before.banned !== after.banned) {
    events.push({
      type: after.banned ? "voter.banned" : "voter.unbanned",
      object: { ...after },
      changes: { banned: { from: before.banned, to: after.banned } },
      subjectVoterId: voterId,
    });
  }
  const billing = changesBetween(billingView(before), billingView(after));
  if (billing) events.push({ type: "voter.billing_changed", object: { ...after }, changes: billing, subjectVoterId: voterId });
  return events;
}
