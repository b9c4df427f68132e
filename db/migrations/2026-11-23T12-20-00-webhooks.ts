/**
 * Webhooks and their deliveries (owner-api-v3.md, "Webhooks"; src/events/).
 * - webhooks: a project's receiver. `secret` signs every delivery, so it is kept as written
 *   (never returned except by create and rotate-secret); `previous_secret` signs too until
 *   `previous_secret_expires_at` (24 h after a rotation). `consecutive_failures` counts the
 *   deliveries that ended failed since the last one that succeeded (100 disable the webhook).
 * - webhook_deliveries: one event for one webhook. `body` is the exact JSON sent (the
 *   EventObject), signed afresh at each attempt. A pending row is due at `next_attempt_at`
 *   (NULL: paused while its webhook is disabled); a worker claims it by setting `claim_token`
 *   and pushing `next_attempt_at` to the end of its lease, committed before the HTTP call, so a
 *   worker that dies mid-attempt leaves a row that becomes due again when the lease ends.
 * - webhook_dispatch_cursor: one row, the feed position (txid, seq) up to which events have
 *   been turned into deliveries; the dispatcher holds it FOR UPDATE while it moves it.
 * Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

const statements = [
  `CREATE TABLE webhooks (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    url text NOT NULL,
    events text[] NOT NULL DEFAULT '{}',
    description text,
    enabled boolean NOT NULL DEFAULT true,
    disabled_reason text CHECK (disabled_reason IN ('gone', 'failing')),
    secret text NOT NULL,
    previous_secret text,
    previous_secret_expires_at timestamptz,
    consecutive_failures integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  "CREATE INDEX webhooks_project_idx ON webhooks (project_id, id)",
  `CREATE TABLE webhook_deliveries (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id integer NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event_id text NOT NULL,
    event_type text NOT NULL,
    body text NOT NULL,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    last_status_code integer,
    last_error text,
    last_duration_ms integer,
    next_attempt_at timestamptz,
    claim_token text,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  // The delivery log of a webhook, newest first, optionally by status.
  "CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (webhook_id, id DESC)",
  // What the workers claim: pending rows by due time (paused rows, NULL, are not indexed).
  `CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at)
    WHERE status = 'pending' AND next_attempt_at IS NOT NULL`,
  `CREATE TABLE webhook_dispatch_cursor (
    id smallint PRIMARY KEY CHECK (id = 1),
    txid xid8 NOT NULL,
    seq bigint NOT NULL
  )`,
  "INSERT INTO webhook_dispatch_cursor (id, txid, seq) VALUES (1, '0', 0)",
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["webhook_dispatch_cursor", "webhook_deliveries", "webhooks"]) {
    await sql.raw(`DROP TABLE IF EXISTS ${table}`).execute(db);
  }
}
