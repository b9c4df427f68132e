/**
 * The billing sync's queries (owner-api-v3.md, "Billing sync"): the project a webhook names,
 * and applyBillingChange, which applies one verified event inside the caller's transaction
 * (withProjectWriteLock): idempotent per event id, out-of-order safe per subscription, and
 * recording one voter.billing_changed per voter it changed.
 *
 * Locking, so that any number of concurrent deliveries (retries of one event, a burst of events
 * of one customer, several instances) ends as if each distinct event were applied once in time
 * order: (1) the event id is inserted first; a second delivery of the same id waits on the
 * unique index for the first transaction and then finds the row (nothing to do). (2) The
 * subscription's row is created if missing and locked (FOR UPDATE): events of one subscription
 * take turns, and each reads the time the previous one left. (3) The voters carrying the customer
 * id are locked in id order (the same order everywhere, so no deadlock), and read after the lock.
 */
import { type RawBuilder, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { BillingSystem } from "../../../db/schema.ts";
import { recordEvents } from "../../events/outbox.ts";
import { voterChangeEvents } from "../../events/voter-events.ts";
import { findAdminVoter, toAdminVoter, writeVoterFields } from "../voters/index.ts";
import { billingFieldsAfter, changedFields } from "./billing.fields.ts";
import type { BillingChange } from "./billing.schemas.ts";

/** How long processed event ids are kept: far past Stripe's and Paddle's retry windows (about 3 days). */
export const PROCESSED_EVENT_RETENTION_DAYS = 30;
/** Old processed ids removed per applied event (bounded work, spread over the traffic). */
const PRUNE_BATCH = 100;

/** The project of a billing webhook, with what verifying and answering need. */
export interface BillingProject {
  id: number;
  currency_symbol: string;
  stripe_webhook_secret: string | null;
  paddle_webhook_secret: string | null;
}

/** The project `slug` names, or undefined. Read fresh each time: a secret change holds at once. */
export async function findBillingProject(db: Db, slug: string): Promise<BillingProject | undefined> {
  return db
    .selectFrom("projects")
    .select(["id", "currency_symbol", "stripe_webhook_secret", "paddle_webhook_secret"])
    .where("slug", "=", slug)
    .executeTakeFirst();
}

/**
 * What applying an event did: `duplicate` (its id was processed before), `stale` (older than the
 * last event applied to its subscription), or `applied` with the number of voter rows written
 * and of voter.billing_changed events recorded (both 0 when no voter carries the customer id or
 * nothing differed; written but no event when only last_synced_at moved).
 */
export type ApplyResult =
  | { outcome: "duplicate" }
  | { outcome: "stale" }
  | { outcome: "applied"; votersWritten: number; eventsRecorded: number };

/**
 * Applies `change` to project `project` inside `trx` (see the module comment for the locking).
 * Every voter of the project whose customer id of the change's system matches gets the fields of
 * billingFieldsAfter, unless that voter was already synced from a newer event (a later event of
 * another subscription of the same customer). `now` stamps updated_at and processed_at.
 */
export async function applyBillingChange(trx: Db, project: BillingProject, change: BillingChange, now: Date): Promise<ApplyResult> {
  await pruneProcessedEvents(trx, project.id, now);
  const inserted = await trx
    .insertInto("billing_events")
    .values({
      project_id: project.id,
      system: change.system,
      event_id: change.eventId,
      event_type: change.eventType,
      occurred_at: change.occurredAt,
      processed_at: now,
    })
    .onConflict((oc) => oc.columns(["project_id", "system", "event_id"]).doNothing())
    .returning("event_id")
    .executeTakeFirst();
  if (!inserted) return { outcome: "duplicate" };

  const occurredAt = sql<Date>`timestamptz 'epoch' + ${change.occurredAtMicros}::bigint * interval '1 microsecond'`;
  const lastIsNewer = await lockSubscription(trx, project.id, change, occurredAt);
  if (lastIsNewer) return { outcome: "stale" };
  await trx
    .updateTable("billing_subscriptions")
    .set({ last_event_at: occurredAt, last_event_id: change.eventId })
    .where("project_id", "=", project.id)
    .where("system", "=", change.system)
    .where("subscription_id", "=", change.subscriptionId)
    .execute();

  const tierId = change.priceId === null ? undefined : await tierOfPrice(trx, project.id, change.system, change.priceId);
  const customerColumn = change.system === "stripe" ? "stripe_customer_id" : "paddle_customer_id";
  const voters = await trx
    .selectFrom("voters")
    .select(["id", "public_id"])
    .where("project_id", "=", project.id)
    .where(customerColumn, "=", change.customerId)
    .orderBy("id")
    .forUpdate()
    .execute();

  let votersWritten = 0;
  let eventsRecorded = 0;
  for (const voter of voters) {
    const before = await findAdminVoter(trx, project.id, voter.public_id);
    if (!before) continue;
    if (before.last_synced_at !== null && change.occurredAt.getTime() < before.last_synced_at.getTime()) continue;
    const fields = changedFields(before, billingFieldsAfter(before, change, tierId));
    if (Object.keys(fields).length === 0) continue;
    await writeVoterFields(trx, voter.id, fields, now);
    votersWritten++;
    const after = await findAdminVoter(trx, project.id, voter.public_id);
    const afterObject = toAdminVoter(after!, project.currency_symbol);
    // voter.billing_changed from the same rule as the owner's PATCH (src/events/voter-events.ts):
    // a sync that only moved last_synced_at (a renewal's invoice) records none.
    const events = voterChangeEvents(toAdminVoter(before, project.currency_symbol), afterObject, voter.id);
    await recordEvents(trx, project.id, events);
    eventsRecorded += events.length;
  }
  return { outcome: "applied", votersWritten, eventsRecorded };
}

/**
 * Creates the change's subscription row if it has none, locks it for the rest of `trx` and tells
 * whether the last event applied to it is newer than `occurredAt` (compared in the database, at
 * the microsecond). A concurrent first event of the same subscription waits on the insert for
 * the other transaction, then locks the committed row.
 */
async function lockSubscription(trx: Db, projectId: number, change: BillingChange, occurredAt: RawBuilder<Date>): Promise<boolean> {
  await trx
    .insertInto("billing_subscriptions")
    .values({ project_id: projectId, system: change.system, subscription_id: change.subscriptionId })
    .onConflict((oc) => oc.columns(["project_id", "system", "subscription_id"]).doNothing())
    .execute();
  const row = await trx
    .selectFrom("billing_subscriptions")
    .select(sql<boolean>`coalesce(last_event_at > ${occurredAt}, false)`.as("newer"))
    .where("project_id", "=", projectId)
    .where("system", "=", change.system)
    .where("subscription_id", "=", change.subscriptionId)
    .forUpdate()
    .executeTakeFirstOrThrow();
  return row.newer;
}

/** The project's tier whose price ids of `system` hold `priceId`, or undefined (ids are unique per project). */
async function tierOfPrice(trx: Db, projectId: number, system: BillingSystem, priceId: string): Promise<number | undefined> {
  const column = system === "stripe" ? sql.ref("stripe_price_ids") : sql.ref("paddle_price_ids");
  const row = await trx
    .selectFrom("tiers")
    .select("id")
    .where("project_id", "=", projectId)
    .where(sql<boolean>`${priceId} = ANY(${column})`)
    .orderBy("id")
    .executeTakeFirst();
  return row?.id;
}

/**
 * Removes up to PRUNE_BATCH of the project's processed event ids older than the retention. Rows
 * another transaction is pruning are skipped (SKIP LOCKED), so concurrent events never wait on
 * each other here. An event retried after its id was pruned is still caught by the subscription's
 * time (an older event) or re-applies the same absolute values (the newest one): nothing changes.
 */
async function pruneProcessedEvents(trx: Db, projectId: number, now: Date): Promise<void> {
  const cutoff = new Date(now.getTime() - PROCESSED_EVENT_RETENTION_DAYS * 86_400_000);
  await sql`DELETE FROM billing_events WHERE ctid IN (
      SELECT ctid FROM billing_events WHERE project_id = ${projectId} AND processed_at < ${cutoff}
      LIMIT ${PRUNE_BATCH} FOR UPDATE SKIP LOCKED)`.execute(trx);
}
