/**
 * The `changes` of an update event (owner-api-v3.md, "Events": `{field: {from, to}}` for
 * updates; references appear as ids).
 */
import { isDeepStrictEqual } from "node:util";
import type { EventData } from "../../db/schema.ts";

/**
 * `{field: {from, to}}` for each of `fields` whose value differs between `before` and `after`
 * (compared deeply, so arrays of tag ids or dates count as equal when their contents are), or
 * null when none does. Dates are compared and reported as they are; the caller passes the owner
 * API's object shapes (RFC 3339 strings), so the event carries what the API shows.
 */
export function changesBetween<T extends Record<string, unknown>>(
  before: T,
  after: T,
  fields: readonly (keyof T & string)[] = Object.keys(after) as (keyof T & string)[],
): EventData["changes"] {
  const changes: NonNullable<EventData["changes"]> = {};
  for (const field of fields) {
    if (!isDeepStrictEqual(before[field], after[field])) changes[field] = { from: before[field] ?? null, to: after[field] ?? null };
  }
  return Object.keys(changes).length > 0 ? changes : null;
}
