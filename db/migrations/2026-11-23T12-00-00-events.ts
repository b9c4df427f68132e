/**
 * The transactional outbox of events (owner-api-v3.md, "Events"): every change of the event
 * table's kinds inserts its rows here in the same transaction as the change.
 * - txid: the inserting transaction's id (xid8). The feed orders by (txid, seq) and lists only
 *   events whose transaction is older than every transaction still running (the snapshot's xmin),
 *   so an event that commits late can never land before a position a reader already passed.
 * - seq: insertion order within the table; with txid it forms the public `evt_` id.
 * - data: `{object, changes}` exactly as delivered.
 * Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

const statements = [
  `CREATE TABLE events (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    type text NOT NULL,
    data jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  "CREATE INDEX events_project_position_idx ON events (project_id, txid, seq)",
  "CREATE INDEX events_position_idx ON events (txid, seq)",
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw("DROP TABLE IF EXISTS events").execute(db);
}
