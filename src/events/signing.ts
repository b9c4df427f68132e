/**
 * Webhook secrets and Standard Webhooks signatures (owner-api-v3.md, "Webhooks"), through the
 * `standardwebhooks` package: `webhook-signature` is `v1,<base64 HMAC-SHA256 of
 * "{id}.{timestamp}.{body}">` keyed by the secret's decoded bytes; during the 24 h after a
 * rotation the previous secret signs too, its signature after the new one, space-separated
 * (receivers accept a message when any listed signature verifies).
 */
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";

/** Random bytes in a secret: more than the spec's minimum of 24 (a full HMAC-SHA256 block key half). */
const SECRET_BYTES = 32;

/** Hours the previous secret keeps signing after rotate-secret. */
export const SECRET_OVERLAP_HOURS = 24;

/** A new webhook secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString("base64")}`;
}

/** The secrets that sign now: the current one, then the previous one while its overlap lasts. */
export function signingSecrets(
  webhook: { secret: string; previous_secret: string | null; previous_secret_expires_at: Date | null },
  now: Date,
): string[] {
  const previousValid =
    webhook.previous_secret !== null && webhook.previous_secret_expires_at !== null && webhook.previous_secret_expires_at > now;
  return previousValid ? [webhook.secret, webhook.previous_secret as string] : [webhook.secret];
}

/** The three Standard Webhooks headers of one attempt. */
export interface SignatureHeaders {
  "webhook-id": string;
  /** Unix seconds. */
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/**
 * Signs `body` (the exact bytes sent) as message `id` at `timestamp` with every secret of
 * `secrets` (from signingSecrets), and returns the headers to send.
 */
export function signDelivery(secrets: readonly string[], id: string, timestamp: Date, body: string): SignatureHeaders {
  // Standard Webhooks timestamps are whole seconds; sign the same instant the header states.
  const seconds = Math.floor(timestamp.getTime() / 1000);
  const at = new Date(seconds * 1000);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(seconds),
    "webhook-signature": secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(" "),
  };
}
