/**
 * The body of a delivery: the EventObject (owner-api-v3.md, "Events"), serialized once when the
 * delivery is made and sent byte for byte at every attempt (the signature covers these bytes).
 */
import { randomBytes } from "node:crypto";
import type { EventData } from "../../db/schema.ts";
import { rfc3339 } from "../lib/http/timestamps.ts";

/** EventObject as delivered. */
export interface EventPayload {
  /** `evt_` id of the event (a ping: a `msg_` id, see pingId). */
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

/**
 * The id of a ping (POST /webhooks/{id}/test), its `webhook-id` and EventObject id: `msg_` and
 * 26 random base32 characters. Not an `evt_` id: a ping is no event of the feed (GET /events
 * never lists it, and `after=` could not take it).
 */
export function pingId(): string {
  const alphabet = "0123456789abcdefghjkmnpqrstvwxyz";
  return `msg_${Array.from(randomBytes(26), (byte) => alphabet[byte & 31]).join("")}`;
}
