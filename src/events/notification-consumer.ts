/**
 * The notification consumer (engagement-api-v3.md, "Notifications (in-app inbox)", "Subscriptions"
 * rule 4 and "Events"): turns committed events into inbox rows, like the webhook dispatcher
 * (src/events/dispatcher.ts) turns them into deliveries. One transaction per batch holds the
 * `notification_cursor` row FOR UPDATE SKIP LOCKED (one instance consumes at a time; the others
 * skip the round), reads the next events in feed order after the cursor (`committedEvents`, which
 * never passes an event that appears later), makes each event's notifications with one set-based
 * `INSERT ... SELECT ... ON CONFLICT (event_seq, type, voter_id) DO NOTHING` per type, and moves
 * the cursor past what it consumed, all committed together. A crash or a lost connection rolls
 * the whole batch back for the next round; the unique key keeps a replay from adding anything:
 * at most one notification per event, type and voter, whatever the instances or retries.
 *
 * Who gets what (the table of "Notifications"), read from the event's `data` as recorded:
 * - feature.status_changed: the feature's subscribers, when `object.is_public` (after) or the
 *   is_public before the change (from the lead event of the same transaction, feature.updated /
 *   merged / unmerged, whose `changes.is_public` says it moved) is true; nothing when the lead is
 *   feature.merged (a merge's move to archived). data `{from, to}`.
 * - feature.updated with `changes.developer_response.to` not null: the subscribers, data
 *   `{developer_response, response_is_denial}`.
 * - release.published: the subscribers of each feature `object.features` lists (the release as
 *   it was published), data `{release: {id, name}}`; a voter following several of them gets one
 *   (the unique key), on the first listed feature they follow.
 * - feature.merged: the duplicate's subscribers, data `{into: object.merged_into}`.
 * - comment.created of a reply: the parent comment's author unless they opted out of the
 *   feature, data `{comment_id, parent_id, author_name, excerpt}`; of a comment whose
 *   `author_role` is owner or editor: the subscribers except the parent's author (whom `replied`
 *   reaches whenever they would be among them), data `{comment_id, author_name, excerpt}`.
 * Everywhere: only subscriptions not opted out, never a voter banned now (none kept for later),
 * never the actor (the comment's author; owner routes otherwise have no voter actor). A comment
 * deleted (or its author erased) before its event is consumed notifies nobody; the erasure of a
 * comment's author nulls `author_name` and `excerpt` of the notifications made from it
 * (scrubVoterNotifications, src/events/erasure.ts).
 */
import { sql } from "kysely";
import type { Db } from "../../db/connect.ts";
import type { EventData } from "../../db/schema.ts";
import type { NotificationType } from "../contract/enums.ts";
import { committedEvents, eventPosition, type StoredEvent } from "./outbox.ts";

/** Events read per consumer transaction. */
export const NOTIFICATION_EVENT_BATCH = 500;
/**
 * Notifications after which a transaction stops taking further events of its batch (one event's
 * fan-out is never split). It bounds how long the transaction holds back the event feed of every
 * reader (committedEvents waits for transactions older than the newest event it lists).
 */
export const NOTIFICATION_ROW_BUDGET = 10_000;
/** How often every worker looks for new events (ms): notifications reach the inbox within 10 s. */
export const NOTIFICATION_POLL_INTERVAL_MS = 1000;
/** Age after which notifications are deleted (days; "Notifications older than 90 days may be deleted"). */
export const NOTIFICATION_RETENTION_DAYS = 90;

/** Code points of a comment's content an `excerpt` keeps. */
export const EXCERPT_CODE_POINTS = 280;

/** What one consumer round did. */
export interface ConsumeResult {
  /** False when another instance held the cursor (nothing done here). */
  ran: boolean;
  /** Events consumed (the cursor moved past them). */
  events: number;
  /** Notifications inserted. */
  notifications: number;
  /** True when more committed events may be waiting (a full batch, or the row budget stopped it). */
  more: boolean;
}

export interface ConsumeOptions {
  batchSize?: number;
  rowBudget?: number;
}

/** The first `EXCERPT_CODE_POINTS` Unicode code points of `content` (a surrogate pair is one). */
export function excerptOf(content: string): string {
  return Array.from(content).slice(0, EXCERPT_CODE_POINTS).join("");
}

/** Consumes one batch of events after the cursor, in one transaction. */
export async function consumeNotificationBatch(db: Db, options: ConsumeOptions = {}): Promise<ConsumeResult> {
  const batchSize = options.batchSize ?? NOTIFICATION_EVENT_BATCH;
  const rowBudget = options.rowBudget ?? NOTIFICATION_ROW_BUDGET;
  return db.transaction().execute(async (trx) => {
    const cursor = await sql<{ txid: string; seq: string }>`
      SELECT txid::text AS txid, seq::text AS seq FROM notification_cursor WHERE id = 1 FOR UPDATE SKIP LOCKED`.execute(trx);
    const at = cursor.rows[0];
    if (!at) return { ran: false, events: 0, notifications: 0, more: false };
    const events = await committedEvents(trx, { after: at, limit: batchSize });
    let consumed = 0;
    let made = 0;
    for (const event of events) {
      made += await notifyEvent(trx, event);
      consumed++;
      if (made >= rowBudget) break;
    }
    if (consumed === 0) return { ran: true, events: 0, notifications: 0, more: false };
    const last = eventPosition(events[consumed - 1]!.id)!;
    await sql`UPDATE notification_cursor SET txid = ${last.txid}::xid8, seq = ${last.seq}::bigint WHERE id = 1`.execute(trx);
    return { ran: true, events: consumed, notifications: made, more: consumed < events.length || events.length === batchSize };
  });
}

/** Consumes batches until the feed is drained, another instance holds the cursor, or `maxBatches` ran; the totals. */
export async function consumePendingNotifications(db: Db, maxBatches = 50, options: ConsumeOptions = {}): Promise<ConsumeResult> {
  const total: ConsumeResult = { ran: false, events: 0, notifications: 0, more: false };
  for (let batch = 0; batch < maxBatches; batch++) {
    const result = await consumeNotificationBatch(db, options);
    total.ran ||= result.ran;
    total.events += result.events;
    total.notifications += result.notifications;
    total.more = result.more;
    if (!result.ran || !result.more) break;
  }
  return total;
}

/**
 * Deletes notifications created more than `days` days before `now`, `chunk` rows per statement
 * (short statements: an inbox write never waits long); the number deleted.
 */
export async function deleteExpiredNotifications(db: Db, now: Date, days = NOTIFICATION_RETENTION_DAYS, chunk = 5000): Promise<number> {
  const before = new Date(now.getTime() - days * 86_400_000);
  let deleted = 0;
  for (;;) {
    const { rows } = await sql<{ n: number }>`
      WITH gone AS (
        DELETE FROM notifications WHERE id IN (
          SELECT id FROM notifications WHERE created_at < ${before} ORDER BY created_at LIMIT ${chunk})
        RETURNING 1)
      SELECT count(*)::int AS n FROM gone`.execute(db);
    const n = Number(rows[0]?.n ?? 0);
    deleted += n;
    if (n < chunk) return deleted;
  }
}

type Trx = Db;

/** The notifications of one event; how many were inserted. */
async function notifyEvent(trx: Trx, event: StoredEvent): Promise<number> {
  switch (event.type) {
    case "feature.status_changed":
      return statusChanged(trx, event);
    case "feature.updated":
      return responded(trx, event);
    case "release.published":
      return shipped(trx, event);
    case "feature.merged":
      return merged(trx, event);
    case "comment.created":
      return commented(trx, event);
    default:
      return 0;
  }
}

const isId = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value);

async function statusChanged(trx: Trx, event: StoredEvent): Promise<number> {
  const object = event.data.object as { id?: unknown; is_public?: unknown };
  const change = event.data.changes?.status;
  if (!change || !isId(object.id)) return 0;
  const lead = await leadEvent(trx, event, object.id);
  if (lead?.type === "feature.merged") return 0;
  const publicAfter = object.is_public === true;
  const publicMove = lead?.data.changes?.is_public;
  const publicBefore = publicMove ? publicMove.from === true : publicAfter;
  if (!publicBefore && !publicAfter) return 0;
  return fanOut(trx, event, "status_changed", { from: change.from, to: change.to }, [object.id], []);
}

/**
 * The event that carries feature `featureId`'s full `changes` in the transaction that recorded
 * `event` (feature.updated, feature.merged or feature.unmerged, recorded just before it), or
 * null when there is none.
 */
async function leadEvent(trx: Trx, event: StoredEvent, featureId: number): Promise<{ type: string; data: EventData } | null> {
  const position = eventPosition(event.id)!;
  const { rows } = await sql<{ type: string; data: EventData | string }>`
    SELECT type, data FROM events
    WHERE txid = ${position.txid}::xid8 AND seq < ${position.seq}::bigint AND project_id = ${event.projectId}
      AND type IN ('feature.updated', 'feature.merged', 'feature.unmerged')
      AND data->'object'->>'id' = ${String(featureId)}
    ORDER BY seq DESC LIMIT 1`.execute(trx);
  const row = rows[0];
  if (!row) return null;
  return { type: row.type, data: typeof row.data === "string" ? (JSON.parse(row.data) as EventData) : row.data };
}

async function responded(trx: Trx, event: StoredEvent): Promise<number> {
  const object = event.data.object as { id?: unknown; response_is_denial?: unknown };
  const response = event.data.changes?.developer_response;
  if (!response || response.to === null || response.to === undefined || !isId(object.id)) return 0;
  const data = { developer_response: response.to, response_is_denial: object.response_is_denial === true };
  return fanOut(trx, event, "responded", data, [object.id], []);
}

async function shipped(trx: Trx, event: StoredEvent): Promise<number> {
  const object = event.data.object as { id?: unknown; name?: unknown; features?: unknown };
  if (!isId(object.id) || !Array.isArray(object.features)) return 0;
  const featureIds = (object.features as { id?: unknown }[]).map((feature) => feature.id).filter(isId);
  if (featureIds.length === 0) return 0;
  return fanOut(trx, event, "shipped", { release: { id: object.id, name: String(object.name ?? "") } }, featureIds, []);
}

async function merged(trx: Trx, event: StoredEvent): Promise<number> {
  const object = event.data.object as { id?: unknown; merged_into?: { id?: unknown; heading?: unknown } | null };
  const into = object.merged_into;
  if (!isId(object.id) || !into || !isId(into.id)) return 0;
  return fanOut(trx, event, "merged", { into: { id: into.id, heading: String(into.heading ?? "") } }, [object.id], []);
}

async function commented(trx: Trx, event: StoredEvent): Promise<number> {
  const object = event.data.object as {
    id?: unknown;
    feature_id?: unknown;
    parent_id?: unknown;
    content?: unknown;
    author_name?: unknown;
    author_role?: unknown;
  };
  if (!isId(object.id) || !isId(object.feature_id) || typeof object.content !== "string") return 0;
  const isTeam = object.author_role === "owner" || object.author_role === "editor";
  const isReply = isId(object.parent_id);
  if (!isTeam && !isReply) return 0;
  // The comment as it stands: deleted (or its author erased) since, it notifies nobody. Key-share
  // locked until this batch commits: an erasure (which locks its voter's comments FOR UPDATE
  // before it scrubs their notifications, src/events/erasure.ts) either sees what this inserts,
  // or has deleted the comment first and this waits, then finds none.
  const comment = await trx
    .selectFrom("comments as c")
    .leftJoin("comments as p", "p.id", "c.parent_id")
    .select(["c.voter_id as author", "p.voter_id as parentAuthor"])
    .where("c.id", "=", object.id)
    .where("c.project_id", "=", event.projectId)
    .forKeyShare("c")
    .executeTakeFirst();
  if (!comment) return 0;
  const authorName = typeof object.author_name === "string" ? object.author_name : null;
  const excerpt = excerptOf(object.content);
  let made = 0;
  if (isReply && comment.parentAuthor !== null && comment.parentAuthor !== comment.author) {
    const data = { comment_id: object.id, parent_id: object.parent_id, author_name: authorName, excerpt };
    made += await count(sql`
      INSERT INTO notifications (project_id, voter_id, feature_id, event_seq, type, data, created_at)
      SELECT ${event.projectId}, v.id, ${object.feature_id}, ${event.seq}::bigint, 'replied', ${jsonb(data)}, ${event.createdAt}
      FROM voters v
      WHERE v.id = ${comment.parentAuthor} AND NOT v.banned
        AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.feature_id = ${object.feature_id} AND s.voter_id = v.id AND s.opted_out)
      ON CONFLICT (event_seq, type, voter_id) DO NOTHING
      RETURNING 1`).execute(trx);
  }
  if (isTeam) {
    const exclude = [comment.author, ...(isReply && comment.parentAuthor !== null ? [comment.parentAuthor] : [])];
    made += await fanOut(
      trx,
      event,
      "team_commented",
      { comment_id: object.id, author_name: authorName, excerpt },
      [object.feature_id],
      exclude,
    );
  }
  return made;
}

/**
 * Inserts notification `type` with `data` for every voter subscribed (not opted out) to one of
 * `featureIds` in the event's project, not banned and not in `exclude`: one statement whatever
 * the number of subscribers. A voter following several of the features gets one, on the first
 * of `featureIds` they follow.
 */
async function fanOut(
  trx: Trx,
  event: StoredEvent,
  type: NotificationType,
  data: Record<string, unknown>,
  featureIds: number[],
  exclude: number[],
): Promise<number> {
  return count(sql`
    INSERT INTO notifications (project_id, voter_id, feature_id, event_seq, type, data, created_at)
    SELECT DISTINCT ON (s.voter_id) s.project_id, s.voter_id, s.feature_id, ${event.seq}::bigint, ${type}, ${jsonb(data)}, ${event.createdAt}
    FROM subscriptions s
    JOIN voters v ON v.id = s.voter_id
    WHERE s.project_id = ${event.projectId} AND s.feature_id = any(${featureIds}::int[]) AND NOT s.opted_out
      AND NOT v.banned AND s.voter_id <> all(${exclude}::int[])
    ORDER BY s.voter_id, array_position(${featureIds}::int[], s.feature_id)
    ON CONFLICT (event_seq, type, voter_id) DO NOTHING
    RETURNING 1`).execute(trx);
}

/** `data` as a jsonb parameter (cast from text: postgres-js would bind a string as a JSON string scalar). */
function jsonb(data: Record<string, unknown>) {
  return sql`${JSON.stringify(data)}::text::jsonb`;
}

/** Wraps an `INSERT ... RETURNING 1` so that executing it yields the number of rows inserted. */
function count(insert: ReturnType<typeof sql>) {
  return {
    async execute(trx: Trx): Promise<number> {
      const { rows } = await sql<{ n: number }>`WITH made AS (${insert}) SELECT count(*)::int AS n FROM made`.execute(trx);
      return Number(rows[0]?.n ?? 0);
    },
  };
}
