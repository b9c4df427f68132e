/**
 * The transactional outbox (owner-api-v3.md, "Events"): `recordEvents` inserts a change's events
 * with the transaction (or statement) that makes the change; `committedEvents` reads them back
 * in feed order for `GET /events` and the webhook dispatcher.
 *
 * Ordering without gaps: an event's position is (txid, seq), the id of the transaction that
 * inserted it and its insertion number. A read lists only events whose transaction is older than
 * the oldest transaction still running (pg_snapshot_xmin of the read's snapshot): every event
 * that becomes visible later belongs to a transaction at least that new, so it sorts after every
 * position already listed and a reader paging with `after` never skips one. The price: an event
 * appears in the feed once every older transaction of the database cluster has ended (usually
 * milliseconds; as long as the longest transaction under way at worst).
 */
import { type Kysely, sql } from "kysely";
import type { Database, EventData } from "../../db/schema.ts";
import type { EventType } from "../contract/enums.ts";

/** One event to record: its type and `data` (the object after the change; `changes` for updates). */
export interface NewEvent {
  type: EventType;
  object: Record<string, unknown>;
  changes?: EventData["changes"];
  /**
   * Internal id of the voter whose personal data `object` carries (voter.*: the voter;
   * comment.*: the author): the events an erasure of that voter scrubs (src/events/erasure.ts).
   */
  subjectVoterId?: number | null;
}

/** An event as stored, in feed order. */
export interface StoredEvent {
  /** Public id: `evt_` + 13 + 13 characters of base32 (txid, seq); sorts as the feed does. */
  id: string;
  /** The row's seq (decimal string): what a delivery of it refers to. */
  seq: string;
  type: EventType;
  projectId: number;
  data: EventData;
  createdAt: Date;
}

/**
 * Inserts `events` of project `projectId` inside `trx`, the transaction that makes the change
 * (so they commit or roll back with it). No events: no statement.
 */
export async function recordEvents(trx: Kysely<Database>, projectId: number, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await trx
    .insertInto("events")
    .values(
      events.map((event) => ({
        project_id: projectId,
        type: event.type,
        // Cast from text: postgres-js would serialize a string bound to a jsonb column as a JSON
        // string scalar, which SQL over data->'object' (the erasure's scrub) cannot see into.
        data: sql<string>`${JSON.stringify({ object: event.object, changes: event.changes ?? null })}::text::jsonb`,
        subject_voter_id: event.subjectVoterId ?? null,
      })),
    )
    .execute();
}

const BASE32 = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford's alphabet, lower case
const PART_LENGTH = 13; // 13 x 5 bits covers a 64-bit integer

function encodePart(value: bigint): string {
  let out = "";
  for (let i = 0; i < PART_LENGTH; i++) {
    out = BASE32[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

function decodePart(text: string): bigint | null {
  let value = 0n;
  for (const char of text) {
    const digit = BASE32.indexOf(char);
    if (digit < 0) return null;
    value = (value << 5n) | BigInt(digit);
  }
  return value < 2n ** 64n ? value : null;
}

/** The public id of the event at position (txid, seq), both decimal strings or bigints. */
export function eventId(txid: string | bigint, seq: string | bigint): string {
  return `evt_${encodePart(BigInt(txid))}${encodePart(BigInt(seq))}`;
}

/** The position an `evt_` id names, or null when `id` is not one (the caller answers 422). */
export function eventPosition(id: string): { txid: string; seq: string } | null {
  if (!/^evt_[0-9a-hjkmnp-tv-z]{26}$/.test(id)) return null;
  const txid = decodePart(id.slice(4, 4 + PART_LENGTH));
  const seq = decodePart(id.slice(4 + PART_LENGTH));
  return txid === null || seq === null ? null : { txid: txid.toString(), seq: seq.toString() };
}

export interface CommittedEventsQuery {
  /** One project's events; omitted: every project's (the webhook dispatcher). */
  projectId?: number;
  /** Only events after this position (from `eventPosition`). */
  after?: { txid: string; seq: string } | null;
  /** Only these types; empty or omitted: all. */
  types?: readonly string[];
  /** At most this many (the caller bounds it). */
  limit: number;
  /** Events to skip first (page-number paging of GET /events). */
  offset?: number;
}

/**
 * Committed events in feed order (oldest first), limited to transactions older than every one
 * still running (see the module comment), filtered as `query` says.
 */
export async function committedEvents(db: Kysely<Database>, query: CommittedEventsQuery): Promise<StoredEvent[]> {
  let select = db
    .selectFrom("events")
    .select([sql<string>`txid::text`.as("txid"), sql<string>`seq::text`.as("seq"), "type", "project_id", "data", "created_at"])
    .where(sql<boolean>`txid < pg_snapshot_xmin(pg_current_snapshot())`);
  if (query.projectId !== undefined) select = select.where("project_id", "=", query.projectId);
  if (query.after) {
    select = select.where(sql<boolean>`(txid, seq) > (${query.after.txid}::xid8, ${query.after.seq}::bigint)`);
  }
  if (query.types && query.types.length > 0) select = select.where("type", "in", [...query.types]);
  // Qualified: a bare "txid" or "seq" in ORDER BY names the text output columns above, which
  // sort "10" before "9" (the feed order, and so paging and the dispatcher's cursor, break).
  const rows = await select
    .orderBy("events.txid")
    .orderBy("events.seq")
    .limit(query.limit)
    .offset(query.offset ?? 0)
    .execute();
  return rows.map((row) => ({
    id: eventId(row.txid, row.seq),
    seq: row.seq,
    type: row.type as EventType,
    projectId: row.project_id,
    data: typeof row.data === "string" ? (JSON.parse(row.data) as EventData) : row.data,
    createdAt: row.created_at,
  }));
}
