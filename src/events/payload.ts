/**
 * The body of a delivery: the EventObject (owner-api-v3.md, "Events"), serialized at each
 * attempt from the event row as stored then (so an attempt after an erasure sends the scrubbed
 * event, Rules 3) and signed over those bytes; a ping's from its webhook.
 */
import { type Kysely, sql } from "kysely";
import type { Database, EventData } from "../../db/schema.ts";
import { rfc3339 } from "../lib/http/timestamps.ts";
import { eventId } from "./outbox.ts";

/** EventObject as delivered. */
export interface EventPayload {
  /** `evt_` id of the event (a ping's too, see newPingId). */
  id: string;
  type: string;
  /** RFC 3339. */
  created_at: string;
  /** The project's slug. */
  project: string;
  data: EventData;
}

/** A stored event as the EventObject of project `projectSlug`: what GET /events lists and a delivery sends. */
export function toEventObject(event: { id: string; type: string; createdAt: Date; data: EventData }, projectSlug: string): EventPayload {
  return {
    id: event.id,
    type: event.type,
    created_at: rfc3339(event.createdAt),
    project: projectSlug,
    data: { object: event.data.object, changes: event.data.changes ?? null },
  };
}

/** The JSON body of an event delivery. */
export function eventBody(event: { id: string; type: string; createdAt: Date; data: EventData }, projectSlug: string): string {
  return JSON.stringify(toEventObject(event, projectSlug));
}

/** A webhook row as the WebhookObject (owner-api-v3.md, "Webhooks"), without its secret. */
export interface WebhookObjectRow {
  id: number;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: "gone" | "failing" | null;
  created_at: Date;
}

/** WebhookObject of `row` (the secret is never part of it). */
export function webhookObject(row: WebhookObjectRow) {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    created_at: rfc3339(row.created_at),
  };
}

/**
 * The EventObject of a ping (type `ping`, sent by POST /webhooks/{id}/test only): id `pingId`
 * (an `evt_` id, see newPingId), made at `createdAt`, `data.object` the webhook's WebhookObject.
 */
export function pingPayload(pingId: string, createdAt: Date, projectSlug: string, webhook: WebhookObjectRow): EventPayload {
  return {
    id: pingId,
    type: "ping",
    created_at: rfc3339(createdAt),
    project: projectSlug,
    data: { object: webhookObject(webhook), changes: null },
  };
}

/**
 * A new ping's id, inside `trx` (the transaction that records the ping's delivery): an `evt_`
 * id like every event's (eventId), at the position (this transaction's id, a seq drawn from the
 * events table's own sequence), so it is unique among event ids and sorts by creation with them.
 * A ping is not stored as an event: GET /events never lists it.
 */
export async function newPingId(trx: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ txid: string; seq: string }>`
    SELECT pg_current_xact_id()::text AS txid, nextval(pg_get_serial_sequence('events', 'seq'))::text AS seq`.execute(trx);
  return eventId(rows[0]!.txid, rows[0]!.seq);
}
