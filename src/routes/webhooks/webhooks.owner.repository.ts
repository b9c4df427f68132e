/**
 * Webhook and delivery queries of the owner routes (owner-api-v3.md, /webhooks...). Writes take
 * a `db | trx` and run in the caller's transaction. Every query is scoped by project, so an id
 * of another project is not found.
 */
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import { newClaimToken, notifyDeliveriesDue, pauseDeliveries, resumeDeliveries } from "../../events/deliveries.repository.ts";
import { newPingId } from "../../events/payload.ts";
import { SECRET_OVERLAP_HOURS } from "../../events/signing.ts";
import { type PageRequest, pageOffset } from "../../lib/http/pagination.ts";
import type { WebhookCreateBody, WebhookPatchBody } from "./webhooks.owner.schemas.ts";

const webhookColumns = ["id", "project_id", "url", "events", "description", "enabled", "disabled_reason", "created_at"] as const;

export interface WebhookRow {
  id: number;
  project_id: number;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: "gone" | "failing" | null;
  created_at: Date;
}

/** One page of the project's webhooks in creation order, and the total. */
export async function listWebhooks(db: Db, projectId: number, request: PageRequest): Promise<{ rows: WebhookRow[]; total: number }> {
  const rows = await db
    .selectFrom("webhooks")
    .select(webhookColumns)
    .where("project_id", "=", projectId)
    .orderBy("id", "asc")
    .limit(request.per_page)
    .offset(pageOffset(request))
    .execute();
  const { total } = await db
    .selectFrom("webhooks")
    .select(sql<number>`count(*)::int`.as("total"))
    .where("project_id", "=", projectId)
    .executeTakeFirstOrThrow();
  return { rows, total };
}

export async function findWebhook(db: Db, projectId: number, webhookId: number): Promise<WebhookRow | undefined> {
  return db
    .selectFrom("webhooks")
    .select(webhookColumns)
    .where("project_id", "=", projectId)
    .where("id", "=", webhookId)
    .executeTakeFirst();
}

/** Creates a webhook with `secret` (already checked input); the row. */
export async function createWebhook(trx: Db, projectId: number, input: WebhookCreateBody, secret: string): Promise<WebhookRow> {
  return trx
    .insertInto("webhooks")
    .values({ project_id: projectId, url: input.url, events: input.events, description: input.description, secret })
    .returning(webhookColumns)
    .executeTakeFirstOrThrow();
}

/**
 * Applies `patch` to webhook `webhookId` of the project; undefined when there is none.
 * Enabling a disabled webhook clears disabled_reason and its run of failed deliveries and makes
 * its paused deliveries due (workers woken); disabling it (the owner: disabled_reason null)
 * pauses them.
 */
export async function updateWebhook(
  trx: Db,
  projectId: number,
  webhookId: number,
  patch: WebhookPatchBody,
): Promise<WebhookRow | undefined> {
  const before = await trx
    .selectFrom("webhooks")
    .select(["enabled"])
    .where("project_id", "=", projectId)
    .where("id", "=", webhookId)
    .forUpdate()
    .executeTakeFirst();
  if (!before) return undefined;
  const { enabled, ...fields } = patch;
  const changes: Record<string, unknown> = { ...fields };
  if (enabled === true && !before.enabled) Object.assign(changes, { enabled: true, disabled_reason: null, consecutive_failures: 0 });
  if (enabled === false && before.enabled) Object.assign(changes, { enabled: false, disabled_reason: null });
  if (Object.keys(changes).length > 0) {
    await trx.updateTable("webhooks").set(changes).where("id", "=", webhookId).execute();
  }
  if (enabled === true && !before.enabled && (await resumeDeliveries(trx, webhookId)) > 0) await notifyDeliveriesDue(trx);
  if (enabled === false && before.enabled) await pauseDeliveries(trx, webhookId);
  return findWebhook(trx, projectId, webhookId);
}

/** Deletes webhook `webhookId` of the project with its deliveries; false if no such webhook. */
export async function deleteWebhook(trx: Db, projectId: number, webhookId: number): Promise<boolean> {
  const removed = await trx
    .deleteFrom("webhooks")
    .where("project_id", "=", projectId)
    .where("id", "=", webhookId)
    .returning("id")
    .executeTakeFirst();
  return removed !== undefined;
}

/**
 * Replaces the secret of webhook `webhookId` by `secret`; the old one keeps signing for
 * SECRET_OVERLAP_HOURS (a second rotation within them drops the older one). The row, or undefined.
 */
export async function rotateWebhookSecret(trx: Db, projectId: number, webhookId: number, secret: string): Promise<WebhookRow | undefined> {
  return trx
    .updateTable("webhooks")
    .set({
      previous_secret: sql<string>`secret`,
      previous_secret_expires_at: sql<Date>`now() + make_interval(hours => ${SECRET_OVERLAP_HOURS})`,
      secret,
    })
    .where("project_id", "=", projectId)
    .where("id", "=", webhookId)
    .returning(webhookColumns)
    .executeTakeFirst();
}

const deliveryColumns = [
  sql<string>`id::text`.as("id"),
  "webhook_id",
  "event_id",
  "event_type",
  "status",
  "attempts",
  "last_status_code",
  "last_error",
  "last_duration_ms",
  "next_attempt_at",
  "created_at",
] as const;

export interface DeliveryRow {
  id: string;
  webhook_id: number;
  event_id: string;
  event_type: string;
  status: "pending" | "succeeded" | "failed";
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
  next_attempt_at: Date | null;
  created_at: Date;
}

/** One page of a webhook's deliveries, newest first, optionally of one status; and the total. */
export async function listDeliveries(
  db: Db,
  webhookId: number,
  status: DeliveryRow["status"] | undefined,
  request: PageRequest,
): Promise<{ rows: DeliveryRow[]; total: number }> {
  const rows = await db
    .selectFrom("webhook_deliveries")
    .select(deliveryColumns)
    .where("webhook_id", "=", webhookId)
    .$if(status !== undefined, (q) => q.where("status", "=", status!))
    .orderBy("webhook_deliveries.id", "desc")
    .limit(request.per_page)
    .offset(pageOffset(request))
    .execute();
  const { total } = await db
    .selectFrom("webhook_deliveries")
    .select(sql<number>`count(*)::int`.as("total"))
    .where("webhook_id", "=", webhookId)
    .$if(status !== undefined, (q) => q.where("status", "=", status!))
    .executeTakeFirstOrThrow();
  return { rows, total };
}

export async function findDelivery(db: Db, webhookId: number, deliveryId: number): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom("webhook_deliveries")
    .select(deliveryColumns)
    .where("webhook_id", "=", webhookId)
    .where("webhook_deliveries.id", "=", String(deliveryId))
    .executeTakeFirst();
}

/**
 * Queues a new delivery of what delivery `deliveryId` of the webhook sent (same event id, the
 * event as stored when the attempt is made, a fresh retry schedule): due now if the webhook is enabled, paused otherwise. Workers
 * are woken. The new row, or undefined when the webhook has no such delivery.
 */
export async function redeliver(trx: Db, webhookId: number, deliveryId: number): Promise<DeliveryRow | undefined> {
  const inserted = await sql<{ id: string }>`
    INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, event_seq, next_attempt_at)
    SELECT d.webhook_id, d.event_id, d.event_type, d.event_seq, CASE WHEN w.enabled THEN now() ELSE NULL END
    FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
    WHERE d.webhook_id = ${webhookId} AND d.id = ${String(deliveryId)}::bigint
    RETURNING id::text AS id`.execute(trx);
  const row = inserted.rows[0];
  if (!row) return undefined;
  await notifyDeliveriesDue(trx);
  return findDelivery(trx, webhookId, Number(row.id));
}

/**
 * Inserts a ping delivery already claimed (attempt 1 under a lease of `leaseSeconds`), with a
 * new ping id (newPingId: an `evt_` id), for the request that makes its one attempt itself; if
 * that request dies, a worker finds the claim expired and records the ping failed without
 * sending it again. The row keeps no body; returns its id, claim token, ping id and creation time.
 */
export async function insertClaimedPing(
  db: Db,
  webhookId: number,
  leaseSeconds: number,
): Promise<{ id: string; claim_token: string; event_id: string; created_at: Date }> {
  const claimToken = newClaimToken();
  const eventId = await newPingId(db);
  const row = await db
    .insertInto("webhook_deliveries")
    .values({
      webhook_id: webhookId,
      event_id: eventId,
      event_type: "ping",
      attempts: 1,
      claim_token: claimToken,
      next_attempt_at: sql<Date>`now() + make_interval(secs => ${leaseSeconds})`,
    })
    .returning([sql<string>`id::text`.as("id"), "created_at"])
    .executeTakeFirstOrThrow();
  return { id: row.id, claim_token: claimToken, event_id: eventId, created_at: row.created_at };
}

/** What an attempt of a ping needs of its webhook (secrets included: internal use only). */
export async function webhookSigningRow(db: Db, webhookId: number) {
  return db
    .selectFrom("webhooks")
    .select(["url", "secret", "previous_secret", "previous_secret_expires_at"])
    .where("id", "=", webhookId)
    .executeTakeFirst();
}
