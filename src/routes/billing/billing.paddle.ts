/**
 * Paddle events (owner-api-v3.md, "Billing sync", Paddle row): the signature is verified by
 * `@paddle/paddle-node-sdk`'s webhook verification on the raw body (Paddle-Signature
 * `ts=...;h1=...`, HMAC-SHA256 of `ts:body`; the SDK refuses a timestamp more than 5 s old, this
 * module one more than 5 s ahead), then
 * the handled event types are reduced to a BillingChange.
 *
 * Handled: subscription.created, .updated, .activated, .trialing, .past_due, .paused, .resumed,
 * .canceled (the subscription object: id, customer_id, status, started_at, canceled_at,
 * current_billing_period, items[0].price.id) and transaction.completed (subscription_id,
 * customer_id, items[0].price: subscription_id, tier and last_synced_at only; a transaction's
 * status is not a subscription status).
 */
import { NodeRuntime, Webhooks } from "@paddle/paddle-node-sdk";
import { z } from "zod";
import { ApiError } from "../../lib/http/errors.ts";
import { parseJsonBody, readAs, UNSET_SECRET, VendorId, VendorStatus } from "./billing.read.ts";
import type { ReadEvent, SubscriptionState } from "./billing.schemas.ts";

// The SDK's verifier takes its HMAC from the runtime provider the Paddle client would install.
NodeRuntime.initialize();
const webhooks = new Webhooks();

const SUBSCRIPTION_EVENTS = new Set([
  "subscription.created",
  "subscription.updated",
  "subscription.activated",
  "subscription.trialing",
  "subscription.past_due",
  "subscription.paused",
  "subscription.resumed",
  "subscription.canceled",
]);

const Timestamp = z.iso.datetime({ offset: true });
const OptionalTimestamp = Timestamp.nullable().optional();

const Envelope = z.object({
  event_id: VendorId,
  event_type: z.string().min(1).max(255),
  occurred_at: Timestamp,
  data: z.unknown(),
});

const SubscriptionObject = z.object({
  id: VendorId,
  customer_id: VendorId,
  status: VendorStatus,
  started_at: OptionalTimestamp,
  canceled_at: OptionalTimestamp,
  current_billing_period: z.object({ starts_at: Timestamp, ends_at: Timestamp }).nullable().optional(),
  items: z
    .array(
      z.object({
        price: z.object({ id: VendorId }).nullable().optional(),
        trial_dates: z.object({ starts_at: Timestamp, ends_at: Timestamp }).nullable().optional(),
      }),
    )
    .optional(),
});

const TransactionObject = z.object({
  customer_id: VendorId.nullable().optional(),
  subscription_id: VendorId.nullable().optional(),
  items: z
    .array(z.object({ price_id: VendorId.nullable().optional(), price: z.object({ id: VendorId }).nullable().optional() }))
    .optional(),
});

/**
 * Microseconds since the epoch of an RFC 3339 time, keeping the fraction Paddle sends (events of
 * one subscription can be under a millisecond apart; a Date keeps milliseconds only).
 */
export function microsOf(text: string): number {
  const fraction = /\.(\d+)/.exec(text)?.[1] ?? "";
  const wholeSeconds = Math.floor(Date.parse(text.replace(/\.\d+/, "")) / 1000);
  return wholeSeconds * 1_000_000 + Number(fraction.padEnd(6, "0").slice(0, 6));
}

const dateOf = (text: string | null | undefined): Date | null => (text == null ? null : new Date(text));

/**
 * Seconds a Paddle-Signature `ts` may lie from the time of receipt: the SDK refuses one more than
 * 5 s old (its MAX_VALID_TIME_DIFFERENCE); the same bound ahead is checked here, since the SDK
 * looks back only.
 */
export const PADDLE_TOLERANCE_SECONDS = 5;

/** The `ts` of a Paddle-Signature header read as the SDK reads it (`;`-separated `key=value`, parseInt); NaN when absent. */
function paddleTimestamp(header: string): number {
  let ts = "";
  for (const part of header.split(";")) {
    const [key, value] = part.split("=");
    if (key === "ts" && value) ts = value;
  }
  return Number.parseInt(ts, 10);
}

/**
 * The event `rawBody` carries, verified against `secret` with `signature` (the Paddle-Signature
 * header, `ts=...;h1=...`) by the SDK, as of `receivedAt`. Missing header or secret, a malformed
 * header, a bad signature, or a `ts` more than 5 s before (the SDK) or after `receivedAt`: 400
 * signature_invalid. A verified body that is not JSON: 422 validation_failed.
 */
export async function verifyPaddleEvent(
  rawBody: string,
  signature: string | undefined,
  secret: string | null,
  receivedAt: Date,
): Promise<unknown> {
  if (!signature) throw signatureInvalid();
  let valid: boolean;
  try {
    valid = (await webhooks.isSignatureValid(rawBody, secret || UNSET_SECRET, signature)) && Boolean(secret);
  } catch {
    // The SDK throws on a header without ts and h1.
    valid = false;
  }
  // A ts signed far ahead would stay replayable until the clock reaches it, plus the tolerance.
  if (valid && !(paddleTimestamp(signature) - Math.floor(receivedAt.getTime() / 1000) <= PADDLE_TOLERANCE_SECONDS)) valid = false;
  if (!valid) throw signatureInvalid();
  return parseJsonBody(rawBody);
}

/** What a verified Paddle event changes (see the module comment); unhandled types are ignored. */
export function readPaddleEvent(event: unknown): ReadEvent {
  const envelope = readAs(Envelope, event);
  const base = {
    system: "paddle" as const,
    eventId: envelope.event_id,
    eventType: envelope.event_type,
    occurredAt: new Date(envelope.occurred_at),
    occurredAtMicros: microsOf(envelope.occurred_at),
  };
  if (SUBSCRIPTION_EVENTS.has(envelope.event_type)) {
    const subscription = readAs(SubscriptionObject, envelope.data, ["data"]);
    const trialing = subscription.status === "trialing";
    const state: SubscriptionState = {
      status: subscription.status,
      subscribedAt: dateOf(subscription.started_at),
      // The spec: while trialing, the trial ends with the current billing period. Afterwards the
      // item's own trial dates tell when it ended (null: no trial), so the field never depends on
      // events that came before.
      trialEndsAt: trialing ? dateOf(subscription.current_billing_period?.ends_at) : dateOf(subscription.items?.[0]?.trial_dates?.ends_at),
      canceledAt: dateOf(subscription.canceled_at),
      ended: subscription.status === "canceled",
      endedAt: dateOf(subscription.canceled_at),
    };
    return {
      kind: "change",
      change: {
        ...base,
        customerId: subscription.customer_id,
        subscriptionId: subscription.id,
        priceId: subscription.items?.[0]?.price?.id ?? null,
        subscription: state,
      },
    };
  }
  if (envelope.event_type === "transaction.completed") {
    const transaction = readAs(TransactionObject, envelope.data, ["data"]);
    if (transaction.subscription_id == null || transaction.customer_id == null) {
      return { kind: "ignored", reason: "transaction of no subscription" };
    }
    const item = transaction.items?.[0];
    return {
      kind: "change",
      change: {
        ...base,
        customerId: transaction.customer_id,
        subscriptionId: transaction.subscription_id,
        priceId: item?.price?.id ?? item?.price_id ?? null,
        subscription: null,
      },
    };
  }
  return { kind: "ignored", reason: `event type ${envelope.event_type} is not applied` };
}

/**
 * One answer for every refusal (no secret, unknown project, missing header, mismatch, too old or
 * too far ahead), so that the answer does not tell which projects exist or have a secret set.
 */
function signatureInvalid(): ApiError {
  return new ApiError(
    "signature_invalid",
    "the Paddle-Signature header is missing, does not match the body with the project's Paddle webhook secret, or its timestamp is over 5 s from the server's clock",
  );
}
