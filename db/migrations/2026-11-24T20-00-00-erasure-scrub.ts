/**
 * What the erasure of a voter needs to scrub what the service stored about them (owner-api-v3.md,
 * Rules 3: in every stored event the voter's personal fields become null; the delivery log keeps
 * no request bodies).
 * - events.subject_voter_id: the internal id of the voter whose personal data the event's object
 *   carries (voter.* events: the voter; comment.* events: the comment's author), so the erasure
 *   finds every such event by index, even a comment.deleted whose comment row is gone. No foreign
 *   key: the erasure scrubs the events, then deletes the voter, and the id stays as a marker.
 *   Existing rows: voter events by their object's voter_id, comment events by their comment row
 *   when it still exists (a comment deleted before this migration cannot be traced to its author).
 * - webhook_deliveries.body is dropped: a delivery's EventObject is built from its event row at
 *   each attempt (event_seq, the events row it delivers; NULL for a ping, built from its webhook),
 *   so an attempt made after an erasure sends the scrubbed event, and no body stays in the log.
 *   Existing rows get event_seq from their `evt_` id (its last 13 base32 characters).
 * - events.data recorded as a JSON string scalar (postgres-js serialized the text it was given)
 *   becomes the JSON object it holds, so SQL can reach data->'object'.
 * Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

const BASE32 = "0123456789abcdefghjkmnpqrstvwxyz";

const statements = [
  // Events recorded through postgres-js before this were stored as a JSON string holding the
  // object (the driver serialized the text it was given): made the object itself.
  "UPDATE events SET data = (data #>> '{}')::jsonb WHERE jsonb_typeof(data) = 'string'",
  "ALTER TABLE events ADD COLUMN subject_voter_id integer",
  `UPDATE events e SET subject_voter_id = v.id FROM voters v
    WHERE e.type LIKE 'voter.%' AND v.project_id = e.project_id AND v.public_id = e.data->'object'->>'voter_id'`,
  `UPDATE events e SET subject_voter_id = c.voter_id FROM comments c
    WHERE e.type IN ('comment.created', 'comment.deleted') AND c.project_id = e.project_id
      AND c.id = CASE WHEN jsonb_typeof(e.data->'object'->'id') = 'number' AND (e.data->'object'->>'id') ~ '^[0-9]{1,9}$'
                      THEN (e.data->'object'->>'id')::int END`,
  "CREATE INDEX events_subject_voter_idx ON events (project_id, subject_voter_id) WHERE subject_voter_id IS NOT NULL",
  "ALTER TABLE webhook_deliveries ADD COLUMN event_seq bigint",
  `UPDATE webhook_deliveries SET event_seq = (
      SELECT sum((strpos('${BASE32}', substr(event_id, 17 + i, 1)) - 1)::numeric * power(32::numeric, 13 - i))::bigint
      FROM generate_series(1, 13) AS i)
    WHERE event_type <> 'ping' AND event_id ~ '^evt_[0-9a-hjkmnp-tv-z]{26}$' AND substr(event_id, 18, 1) <= '7'`,
  "ALTER TABLE webhook_deliveries DROP COLUMN body",
  "CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_seq) WHERE event_seq IS NOT NULL",
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

/** The bodies cannot come back: rows get an empty body ("{}"). */
export async function down(db: Kysely<any>): Promise<void> {
  for (const statement of [
    "DROP INDEX IF EXISTS webhook_deliveries_event_idx",
    "ALTER TABLE webhook_deliveries ADD COLUMN body text NOT NULL DEFAULT '{}'",
    "ALTER TABLE webhook_deliveries ALTER COLUMN body DROP DEFAULT",
    "ALTER TABLE webhook_deliveries DROP COLUMN IF EXISTS event_seq",
    "DROP INDEX IF EXISTS events_subject_voter_idx",
    "ALTER TABLE events DROP COLUMN IF EXISTS subject_voter_id",
  ]) {
    await sql.raw(statement).execute(db);
  }
}
