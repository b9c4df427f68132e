/**
 * The billing sync's shapes (owner-api-v3.md, "Billing sync"): the answer object of the two
 * webhook routes, and BillingChange, what a Stripe or Paddle event says about one subscription
 * once its vendor module (billing.stripe.ts, billing.paddle.ts) has read it.
 */
import { z } from "@hono/zod-openapi";
import type { BillingSystem } from "../../../db/schema.ts";

export const ReceivedObject = z
  .object({
    received: z.literal(true).openapi({
      description: "Always true: the event was verified and is applied, or was already applied, or changes nothing",
    }),
  })
  .openapi("BillingReceivedObject");

/**
 * The subscription's own state, as a subscription event reports it (absent from invoice and
 * transaction events, which carry no subscription status). Times are Dates.
 */
export interface SubscriptionState {
  /** The vendor's status as sent (subscription_status passes it through uninterpreted). */
  status: string;
  /** Stripe start_date, Paddle started_at. */
  subscribedAt: Date | null;
  /**
   * Stripe trial_end; Paddle: the current billing period's end while the status is trialing,
   * else the first item's trial end (trial_dates.ends_at) if it had a trial.
   */
  trialEndsAt: Date | null;
  canceledAt: Date | null;
  /** True when the subscription has ended (Stripe deleted, canceled, incomplete_expired; Paddle canceled). */
  ended: boolean;
  /** When it ended (Stripe ended_at, Paddle canceled_at), if the event says. */
  endedAt: Date | null;
}

/** One verified billing event, reduced to what the voter fields of "Billing sync" need. */
export interface BillingChange {
  system: BillingSystem;
  /** The vendor's event id: the idempotency key (with project and system). */
  eventId: string;
  eventType: string;
  /** The event's time (Stripe `created`, Paddle `occurred_at`), as last_synced_at shows it (ms). */
  occurredAt: Date;
  /**
   * The same time in whole microseconds since the epoch, the precision Paddle sends (Stripe:
   * seconds): what orders the events of a subscription.
   */
  occurredAtMicros: number;
  /** Matched against the voter's stripe_customer_id or paddle_customer_id. */
  customerId: string;
  subscriptionId: string;
  /** The first item's price id; selects the tier whose price ids hold it. null: none sent. */
  priceId: string | null;
  /** Present on subscription events only. */
  subscription: SubscriptionState | null;
}

/**
 * What a vendor module makes of a verified event: a change to apply, or nothing to do (a type the
 * sync does not handle, or an invoice/transaction that belongs to no subscription).
 */
export type ReadEvent = { kind: "change"; change: BillingChange } | { kind: "ignored"; reason: string };
