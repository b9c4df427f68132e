/**
 * Delivery rows through their life (owner-api-v3.md, "Webhooks"): made pending by the
 * dispatcher, a test or a redeliver request (a row names its event, event_seq, and keeps no
 * body: the claim builds the EventObject from the event row as stored then); claimed by a worker under a lease (FOR UPDATE SKIP
 * LOCKED, committed before the HTTP request, so two workers never make the same attempt and an
 * attempt cut short by a crash is made again once the lease ends); then succeeded, failed, or
 * due again at the next retry time. Times are the database's clock (now()), the one clock every
 * instance shares.
 */
import { randomBytes } from "node:crypto";
import { type Kysely, sql } from "kysely";
import type { Database, EventData } from "../../db/schema.ts";
import { eventBody, pingPayload } from "./payload.ts";

type Db = Kysely<Database>;

/** The NOTIFY channel that wakes every worker when deliveries become due. */
export const DELIVERIES_CHANNEL = "fb_webhook_deliveries";

/** Wakes every instance's worker (sent at the commit of the transaction that runs it). */
export async function notifyDeliveriesDue(db: Db): Promise<void> {
  await sql`SELECT pg_notify(${DELIVERIES_CHANNEL}, '')`.execute(db);
}

/** Due deliveries ranked per webhook by one claim (see claimDueDeliveries). */
const CANDIDATES = 500;

/** A claimed delivery with what an attempt needs of its webhook. */
export interface ClaimedDelivery {
  id: string;
  webhook_id: number;
  event_id: string;
  event_type: string;
  /**
   * The EventObject to send, serialized from the event row as stored at the claim (a ping's from
   * its webhook); null when the event row is gone (the attempt is recorded failed, not sent).
   */
  body: string | null;
  /** Attempts begun, this one included. */
  attempts: number;
  claim_token: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

/** A fresh claim token (identifies one claim: a result is recorded only under it). */
export function newClaimToken(): string {
  return randomBytes(12).toString("base64url");
}

/**
 * Claims up to `limit` due deliveries of enabled webhooks, oldest due first, at most
 * `perWebhook` under way per webhook (counting live leases of every instance), each for
 * `leaseSeconds`: `attempts` grows by one and `next_attempt_at` becomes the lease's end. One
 * statement: the claim is committed when it returns.
 */
export async function claimDueDeliveries(
  db: Db,
  options: { limit: number; perWebhook: number; leaseSeconds: number },
): Promise<ClaimedDelivery[]> {
  const token = newClaimToken();
  // Candidates are bounded (the CANDIDATES oldest due) before ranking, so a backlog of thousands
  // costs no more. Known limit: a webhook at its cap with more than CANDIDATES due deliveries
  // older than every other webhook's holds the others back until its attempts move on.
  const result = await sql<ClaimedRow>`
    WITH due AS (
      SELECT d.id, d.webhook_id, d.next_attempt_at
      FROM webhook_deliveries d
      JOIN webhooks w ON w.id = d.webhook_id AND w.enabled
      WHERE d.status = 'pending' AND d.next_attempt_at IS NOT NULL AND d.next_attempt_at <= now()
      ORDER BY d.next_attempt_at
      LIMIT ${Math.max(CANDIDATES, options.limit * 4)}
    ),
    busy AS (
      SELECT b.webhook_id, count(*)::int AS n
      FROM webhook_deliveries b
      WHERE b.status = 'pending' AND b.claim_token IS NOT NULL AND b.next_attempt_at > now()
        AND b.webhook_id IN (SELECT webhook_id FROM due)
      GROUP BY b.webhook_id
    ),
    ranked AS (
      SELECT due.id,
             row_number() OVER (PARTITION BY due.webhook_id ORDER BY due.next_attempt_at, due.id) + coalesce(busy.n, 0) AS slot
      FROM due LEFT JOIN busy USING (webhook_id)
    ),
    picked AS (
      SELECT d.id
      FROM webhook_deliveries d
      JOIN ranked r ON r.id = d.id
      WHERE r.slot <= ${options.perWebhook}
        AND d.status = 'pending' AND d.next_attempt_at IS NOT NULL AND d.next_attempt_at <= now()
      ORDER BY d.next_attempt_at
      LIMIT ${options.limit}
      FOR UPDATE OF d SKIP LOCKED
    ),
    claimed AS (
      UPDATE webhook_deliveries d
      SET attempts = d.attempts + 1,
          claim_token = ${token},
          next_attempt_at = now() + make_interval(secs => ${options.leaseSeconds})
      FROM picked, webhooks w
      WHERE d.id = picked.id AND w.id = d.webhook_id
      RETURNING d.id, d.webhook_id, d.event_id, d.event_type, d.event_seq, d.attempts, d.claim_token, w.project_id,
                w.url, w.secret, w.previous_secret, w.previous_secret_expires_at,
                w.events AS webhook_events, w.description AS webhook_description, w.enabled AS webhook_enabled,
                w.disabled_reason AS webhook_disabled_reason, w.created_at AS webhook_created_at
    )
    -- The body's parts, read as stored now: an event scrubbed by an erasure is sent scrubbed.
    SELECT c.id::text AS id, c.webhook_id, c.event_id, c.event_type, c.attempts, c.claim_token,
           c.url, c.secret, c.previous_secret, c.previous_secret_expires_at,
           c.webhook_events, c.webhook_description, c.webhook_enabled, c.webhook_disabled_reason, c.webhook_created_at,
           p.slug AS project_slug, e.data AS event_data, e.created_at AS event_created_at,
           CASE WHEN c.event_type = 'ping' THEN (SELECT min(o.created_at) FROM webhook_deliveries o
             WHERE o.webhook_id = c.webhook_id AND o.event_id = c.event_id) END AS ping_created_at
    FROM claimed c
    JOIN projects p ON p.id = c.project_id
    LEFT JOIN events e ON e.seq = c.event_seq`.execute(db);
  return result.rows.map(claimedDelivery);
}

/** What the claim statement returns per delivery. */
interface ClaimedRow {
  id: string;
  webhook_id: number;
  event_id: string;
  event_type: string;
  attempts: number;
  claim_token: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | string | null;
  webhook_events: string[];
  webhook_description: string | null;
  webhook_enabled: boolean;
  webhook_disabled_reason: "gone" | "failing" | null;
  webhook_created_at: Date | string;
  project_slug: string;
  event_data: EventData | string | null;
  event_created_at: Date | string | null;
  ping_created_at: Date | string | null;
}

const asDate = (value: Date | string) => (value instanceof Date ? value : new Date(value));

/** A claimed row with its body: the event's EventObject, a ping's, or null when the event is gone. */
function claimedDelivery(row: ClaimedRow): ClaimedDelivery {
  let body: string | null = null;
  if (row.event_type === "ping") {
    const webhook = {
      id: row.webhook_id,
      url: row.url,
      events: row.webhook_events,
      description: row.webhook_description,
      enabled: row.webhook_enabled,
      disabled_reason: row.webhook_disabled_reason,
      created_at: asDate(row.webhook_created_at),
    };
    body = JSON.stringify(pingPayload(row.event_id, asDate(row.ping_created_at ?? new Date()), row.project_slug, webhook));
  } else if (row.event_data !== null && row.event_created_at !== null) {
    const data = typeof row.event_data === "string" ? (JSON.parse(row.event_data) as EventData) : row.event_data;
    body = eventBody({ id: row.event_id, type: row.event_type, createdAt: asDate(row.event_created_at), data }, row.project_slug);
  }
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    event_type: row.event_type,
    body,
    attempts: row.attempts,
    claim_token: row.claim_token,
    url: row.url,
    secret: row.secret,
    previous_secret: row.previous_secret,
    previous_secret_expires_at: row.previous_secret_expires_at === null ? null : asDate(row.previous_secret_expires_at),
  };
}

/** The outcome of one attempt, as the delivery log shows it. */
export interface AttemptRecord {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** Seconds until the next attempt; null when the delivery is over (succeeded or failed). */
  retryInSeconds: number | null;
  /** The receiver answered 2xx. */
  succeeded: boolean;
  /** The receiver answered 410 Gone: the webhook is disabled at once. */
  gone: boolean;
}

/** What recording an attempt did to the webhook. */
export interface RecordedAttempt {
  /** False when the claim was lost (the lease ran out and another worker took the row) or the row is gone. */
  recorded: boolean;
  /** The webhook was disabled by this outcome. */
  disabled: "gone" | "failing" | null;
}

/**
 * Locks the row of delivery `deliveryId`'s webhook (FOR NO KEY UPDATE, inside the caller's
 * transaction) and tells whether it is enabled, as committed once the lock is held; false when
 * the delivery or webhook is gone. The owner's PATCH locks the same row before it pauses the
 * webhook's deliveries, so an attempt's outcome recorded after this sees the pause.
 */
async function lockWebhookOf(trx: Db, deliveryId: string): Promise<boolean> {
  const { rows } = await sql<{ enabled: boolean }>`SELECT w.enabled FROM webhooks w
    WHERE w.id = (SELECT d.webhook_id FROM webhook_deliveries d WHERE d.id = ${deliveryId}::bigint)
    FOR NO KEY UPDATE`.execute(trx);
  return rows[0]?.enabled ?? false;
}

/**
 * Stores the outcome of the attempt made under `claimToken` on delivery `deliveryId`, in one
 * transaction with its effect on the webhook: a success resets the webhook's run of failed
 * deliveries; a delivery that ends failed lengthens it, and the `disableAfter`-th in a row
 * disables the webhook (`failing`); a 410 disables it (`gone`). A disabled webhook's pending
 * deliveries are paused (next_attempt_at NULL) until it is enabled again. Pings (event_type
 * `ping`) change neither the run nor, except by a 410, the webhook.
 *
 * The webhook's row is locked first (lockWebhookOf): an attempt that ends while the owner
 * disables the webhook waits for that commit and is recorded paused (pauseDeliveries leaves a
 * delivery under a live claim to this). Read without the lock, `enabled` could still be on and
 * a retry of a paused webhook be scheduled.
 */
export async function recordAttempt(
  db: Db,
  deliveryId: string,
  claimToken: string,
  outcome: AttemptRecord,
  options: { disableAfter: number },
): Promise<RecordedAttempt> {
  return db.transaction().execute(async (trx) => {
    const enabled = await lockWebhookOf(trx, deliveryId);
    const status = outcome.succeeded ? "succeeded" : outcome.retryInSeconds === null ? "failed" : "pending";
    const updated = await sql<{ webhook_id: number; event_type: string }>`
      UPDATE webhook_deliveries d
      SET status = ${status},
          last_status_code = ${outcome.statusCode},
          last_error = ${outcome.error},
          last_duration_ms = ${Math.round(outcome.durationMs)},
          claim_token = NULL,
          next_attempt_at = CASE
            WHEN ${outcome.retryInSeconds}::float8 IS NULL THEN NULL
            WHEN ${enabled}::boolean THEN now() + make_interval(secs => ${outcome.retryInSeconds}::float8)
            ELSE NULL
          END
      WHERE d.id = ${deliveryId}::bigint AND d.claim_token = ${claimToken}
      RETURNING d.webhook_id, d.event_type`.execute(trx);
    const row = updated.rows[0];
    if (!row) return { recorded: false, disabled: null };
    let disabled: RecordedAttempt["disabled"] = null;
    if (outcome.gone) {
      const changed = await trx
        .updateTable("webhooks")
        .set({ enabled: false, disabled_reason: "gone" })
        .where("id", "=", row.webhook_id)
        .where("enabled", "=", true)
        .returning("id")
        .executeTakeFirst();
      if (changed) disabled = "gone";
    } else if (row.event_type !== "ping" && status === "succeeded") {
      await trx
        .updateTable("webhooks")
        .set({ consecutive_failures: 0 })
        .where("id", "=", row.webhook_id)
        .where("consecutive_failures", "<>", 0)
        .execute();
    } else if (row.event_type !== "ping" && status === "failed") {
      const counted = await sql<{ disabled: boolean }>`
        UPDATE webhooks
        SET consecutive_failures = consecutive_failures + 1,
            disabled_reason = CASE WHEN enabled AND consecutive_failures + 1 >= ${options.disableAfter} THEN 'failing' ELSE disabled_reason END,
            enabled = enabled AND consecutive_failures + 1 < ${options.disableAfter}
        WHERE id = ${row.webhook_id}
        RETURNING (disabled_reason = 'failing' AND NOT enabled AND consecutive_failures = ${options.disableAfter}) AS disabled`.execute(
        trx,
      );
      if (counted.rows[0]?.disabled) disabled = "failing";
    }
    if (disabled) await pauseDeliveries(trx, row.webhook_id);
    return { recorded: true, disabled };
  });
}

/**
 * Pauses the pending deliveries of a webhook being disabled (next_attempt_at NULL: never due),
 * except those under a live claim, whose outcome is recorded as paused when it comes.
 */
export async function pauseDeliveries(db: Db, webhookId: number): Promise<void> {
  await sql`
    UPDATE webhook_deliveries SET next_attempt_at = NULL
    WHERE webhook_id = ${webhookId} AND status = 'pending' AND next_attempt_at IS NOT NULL
      AND (claim_token IS NULL OR next_attempt_at <= now())`.execute(db);
}

/** Makes the paused deliveries of a webhook being enabled due now; how many. */
export async function resumeDeliveries(db: Db, webhookId: number): Promise<number> {
  const result = await db
    .updateTable("webhook_deliveries")
    .set({ next_attempt_at: sql`now()`, claim_token: null })
    .where("webhook_id", "=", webhookId)
    .where("status", "=", "pending")
    .where("next_attempt_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Gives back `claims` of attempts cut short on purpose (a worker stopping): due again at once,
 * so another instance makes the attempt without waiting for the lease to end. The attempt
 * stays counted (its request may have reached the receiver).
 */
export async function releaseClaims(db: Db, claims: readonly { id: string; claim_token: string }[], error: string): Promise<void> {
  for (const claim of claims) {
    await db.transaction().execute(async (trx) => {
      const enabled = await lockWebhookOf(trx, claim.id);
      await sql`
        UPDATE webhook_deliveries d
        SET claim_token = NULL, last_error = ${error}, last_status_code = NULL,
            next_attempt_at = CASE WHEN ${enabled}::boolean THEN now() ELSE NULL END
        WHERE d.id = ${claim.id}::bigint AND d.claim_token = ${claim.claim_token}`.execute(trx);
    });
  }
}
