/**
 * The dispatcher: turns committed events into deliveries (owner-api-v3.md, "Webhooks"). One
 * transaction per batch holds the cursor row FOR UPDATE SKIP LOCKED (one instance dispatches at
 * a time; the others skip the round), reads the next events in feed order after the cursor
 * (`committedEvents`, which lists an event only once no older transaction can still commit one
 * before it, so the cursor never passes an event that appears later), inserts one delivery per
 * enabled webhook of the event's project whose filter takes it (an empty filter takes all) and
 * which existed when the event was made, moves the cursor past the batch, and NOTIFYs the
 * workers, all committed together: no event dispatched twice, none skipped. A delivery refers to
 * its event row (event_seq) and stores no body: each attempt sends the event as stored then.
 */
import { sql } from "kysely";
import type { Db } from "../../db/connect.ts";
import { notifyDeliveriesDue } from "./deliveries.repository.ts";
import { committedEvents, eventPosition } from "./outbox.ts";

/** Events read per dispatch transaction. */
export const DISPATCH_BATCH = 500;

/** What one dispatch round did. */
export interface DispatchResult {
  /** False when another instance held the cursor (nothing done here). */
  ran: boolean;
  events: number;
  deliveries: number;
}

/** Dispatches one batch of at most `batchSize` events. */
export async function dispatchBatch(db: Db, batchSize = DISPATCH_BATCH): Promise<DispatchResult> {
  return db.transaction().execute(async (trx) => {
    const cursor = await sql<{ txid: string; seq: string }>`
      SELECT txid::text AS txid, seq::text AS seq FROM webhook_dispatch_cursor WHERE id = 1 FOR UPDATE SKIP LOCKED`.execute(trx);
    const at = cursor.rows[0];
    if (!at) return { ran: false, events: 0, deliveries: 0 };
    const events = await committedEvents(trx, { after: at, limit: batchSize });
    if (events.length === 0) return { ran: true, events: 0, deliveries: 0 };
    const projectIds = [...new Set(events.map((event) => event.projectId))];
    const webhooks = await trx
      .selectFrom("webhooks")
      .select(["webhooks.id", "webhooks.project_id", "webhooks.events", "webhooks.created_at"])
      .where("webhooks.project_id", "in", projectIds)
      .where("webhooks.enabled", "=", true)
      .execute();
    const rows = [];
    for (const event of events) {
      for (const webhook of webhooks) {
        if (webhook.project_id !== event.projectId) continue;
        if (webhook.events.length > 0 && !webhook.events.includes(event.type)) continue;
        // A webhook hears of the events made after it, not of the backlog before it.
        if (event.createdAt < webhook.created_at) continue;
        rows.push({
          webhook_id: webhook.id,
          event_id: event.id,
          event_type: event.type,
          event_seq: event.seq,
          next_attempt_at: sql<Date>`now()`,
        });
      }
    }
    for (let start = 0; start < rows.length; start += 500) {
      await trx
        .insertInto("webhook_deliveries")
        .values(rows.slice(start, start + 500))
        .execute();
    }
    const last = eventPosition(events[events.length - 1]!.id)!;
    await sql`UPDATE webhook_dispatch_cursor SET txid = ${last.txid}::xid8, seq = ${last.seq}::bigint WHERE id = 1`.execute(trx);
    if (rows.length > 0) await notifyDeliveriesDue(trx);
    return { ran: true, events: events.length, deliveries: rows.length };
  });
}

/** Dispatches batches until the feed is drained (or `maxBatches` ran); the totals. */
export async function dispatchPending(db: Db, maxBatches = 20, batchSize = DISPATCH_BATCH): Promise<DispatchResult> {
  const total: DispatchResult = { ran: false, events: 0, deliveries: 0 };
  for (let batch = 0; batch < maxBatches; batch++) {
    const result = await dispatchBatch(db, batchSize);
    total.ran ||= result.ran;
    total.events += result.events;
    total.deliveries += result.deliveries;
    if (!result.ran || result.events < batchSize) break;
  }
  return total;
}
