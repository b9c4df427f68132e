/**
 * Stripe events (owner-api-v3.md, "Billing sync", Stripe row): the signature is verified by the
 * `stripe` library's webhooks.constructEvent on the raw body (Stripe-Signature, 300 s tolerance;
 * the library looks back only, the bound ahead is checked here), then the handled event types
 * are reduced to a BillingChange.
 *
 * Handled: customer.subscription.created, .updated, .deleted, .trial_will_end (the subscription
 * object: every field of the table) and invoice.paid, invoice.payment_failed (the invoice names
 * its subscription and the first line's price: subscription_id, tier and last_synced_at only; an
 * invoice carries no subscription status). Invoices of both API shapes are read: `subscription`
 * and `lines.data[].price` (before 2025-03-31) or `parent.subscription_details.subscription` and
 * `lines.data[].pricing.price_details.price` (since).
 */
import Stripe from "stripe";
import { z } from "zod";
import { ApiError } from "../../lib/http/errors.ts";
import { notJson, readAs, UNSET_SECRET, VendorId, VendorStatus } from "./billing.read.ts";
import type { ReadEvent, SubscriptionState } from "./billing.schemas.ts";

/**
 * Seconds a Stripe-Signature timestamp may lie from the time of receipt, in the past (checked by
 * the library, its own default) or in the future (checked here: the library looks back only).
 */
export const STRIPE_TOLERANCE_SECONDS = 300;

/** Subscription statuses that mean the subscription has ended (the spec's churn rule). */
const ENDED_STATUSES = new Set(["canceled", "incomplete_expired"]);

const SUBSCRIPTION_EVENTS = new Set([
  "customer.subscription.created",
  "customer.subscription.updated",
  "customer.subscription.deleted",
  "customer.subscription.trial_will_end",
]);
const INVOICE_EVENTS = new Set(["invoice.paid", "invoice.payment_failed"]);

/** An id, or the expanded object that carries it. */
const Ref = z.union([VendorId, z.object({ id: VendorId })]).transform((ref) => (typeof ref === "string" ? ref : ref.id));
const UnixTime = z.number().int().nonnegative().nullable().optional();

const Envelope = z.object({
  id: VendorId,
  type: z.string().min(1).max(255),
  created: z.number().int().nonnegative(),
  data: z.object({ object: z.unknown() }),
});

const PriceRef = z.object({ id: VendorId }).nullable().optional();

const SubscriptionObject = z.object({
  id: VendorId,
  customer: Ref,
  status: VendorStatus,
  start_date: UnixTime,
  trial_end: UnixTime,
  canceled_at: UnixTime,
  ended_at: UnixTime,
  items: z.object({ data: z.array(z.object({ price: PriceRef })) }).optional(),
});

const InvoiceObject = z.object({
  customer: Ref.nullable().optional(),
  subscription: Ref.nullable().optional(),
  parent: z
    .object({ subscription_details: z.object({ subscription: Ref.nullable().optional() }).nullable().optional() })
    .nullable()
    .optional(),
  lines: z
    .object({
      data: z.array(
        z.object({
          price: PriceRef,
          pricing: z
            .object({ price_details: z.object({ price: Ref.nullable().optional() }).nullable().optional() })
            .nullable()
            .optional(),
        }),
      ),
    })
    .optional(),
});

const dateOf = (seconds: number | null | undefined): Date | null => (seconds == null ? null : new Date(seconds * 1000));

/**
 * The `t=` of a Stripe-Signature header read as the stripe library reads it (the last `t=` of the
 * comma-separated pairs, parseInt), so that it is the timestamp the matched signature covers;
 * -1 when there is none.
 */
function stripeTimestamp(header: string): number {
  let timestamp = -1;
  for (const item of header.split(",")) {
    const [key, value] = item.split("=");
    if (key === "t") timestamp = Number.parseInt(value ?? "", 10);
  }
  return timestamp;
}

/**
 * The event `rawBody` carries, verified against `secret` with `signature` (the Stripe-Signature
 * header) as of `receivedAt`. Missing header or secret, a bad signature, or a timestamp more than
 * the tolerance (300 s, owner-api-v3.md "Billing sync") before or after `receivedAt`: 400
 * signature_invalid. A verified body that is not JSON: 422 validation_failed.
 */
export function verifyStripeEvent(rawBody: string, signature: string | undefined, secret: string | null, receivedAt: Date): unknown {
  if (!signature) throw signatureInvalid();
  try {
    const event = Stripe.webhooks.constructEvent(
      rawBody,
      signature,
      secret || UNSET_SECRET,
      STRIPE_TOLERANCE_SECONDS,
      undefined,
      receivedAt.getTime(),
    );
    if (!secret) throw signatureInvalid();
    // constructEvent refuses only old timestamps: one signed far ahead would stay replayable
    // until the clock reaches it, plus the tolerance.
    if (stripeTimestamp(signature) - Math.floor(receivedAt.getTime() / 1000) > STRIPE_TOLERANCE_SECONDS) throw signatureInvalid();
    return event;
  } catch (error) {
    if (error instanceof ApiError) throw error;
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) {
      throw signatureInvalid();
    }
    // constructEvent parses the body only after the signature matched.
    if (error instanceof SyntaxError) throw notJson();
    throw error;
  }
}

/** What a verified Stripe event changes (see the module comment); unhandled types are ignored. */
export function readStripeEvent(event: unknown): ReadEvent {
  const envelope = readAs(Envelope, event);
  const occurredAt = new Date(envelope.created * 1000);
  const base = {
    system: "stripe" as const,
    eventId: envelope.id,
    eventType: envelope.type,
    occurredAt,
    occurredAtMicros: envelope.created * 1_000_000,
  };
  if (SUBSCRIPTION_EVENTS.has(envelope.type)) {
    const subscription = readAs(SubscriptionObject, envelope.data.object, ["data", "object"]);
    const ended = envelope.type === "customer.subscription.deleted" || ENDED_STATUSES.has(subscription.status);
    const state: SubscriptionState = {
      status: subscription.status,
      subscribedAt: dateOf(subscription.start_date),
      trialEndsAt: dateOf(subscription.trial_end),
      canceledAt: dateOf(subscription.canceled_at),
      ended,
      endedAt: dateOf(subscription.ended_at),
    };
    return {
      kind: "change",
      change: {
        ...base,
        customerId: subscription.customer,
        subscriptionId: subscription.id,
        priceId: subscription.items?.data[0]?.price?.id ?? null,
        subscription: state,
      },
    };
  }
  if (INVOICE_EVENTS.has(envelope.type)) {
    const invoice = readAs(InvoiceObject, envelope.data.object, ["data", "object"]);
    const subscriptionId = invoice.subscription ?? invoice.parent?.subscription_details?.subscription ?? null;
    if (subscriptionId === null || invoice.customer == null) return { kind: "ignored", reason: "invoice of no subscription" };
    const line = invoice.lines?.data[0];
    return {
      kind: "change",
      change: {
        ...base,
        customerId: invoice.customer,
        subscriptionId,
        priceId: line?.price?.id ?? line?.pricing?.price_details?.price ?? null,
        subscription: null,
      },
    };
  }
  return { kind: "ignored", reason: `event type ${envelope.type} is not applied` };
}

/**
 * One answer for every refusal (no secret, unknown project, missing header, mismatch, too old or
 * too far ahead), so that the answer does not tell which projects exist or have a secret set.
 */
function signatureInvalid(): ApiError {
  return new ApiError(
    "signature_invalid",
    "the Stripe-Signature header is missing, does not match the body with the project's Stripe webhook secret, or its timestamp is over 300 s from the server's clock",
  );
}
