/**
 * Subscriptions, the notification inbox and email preferences (engagement-api-v3.md).
 * - projects.notification_settings: the owner's `notifications` settings ("Email
 *   notifications"); `from_name` null means the project's name.
 * - voters.email_unsubscribed: the voter unsubscribed from the project's emails.
 * - subscriptions: one row per voter and feature. `opted_out` records a DELETE (rule 2): the
 *   row stays so later votes and comments do not subscribe again; only a PUT clears it.
 *   Deleting a feature or a voter deletes its rows (rule 3).
 * - notifications: the inbox. UNIQUE (event_seq, type, voter_id) is the "at most one per
 *   event, type and voter" rule: the consumer inserts with ON CONFLICT DO NOTHING, so a
 *   replayed batch adds nothing. `read_at` null: unread.
 * - notification_cursor: one row, the feed position (txid, seq) up to which events have been
 *   turned into notifications. It starts at the end of the feed as it stands, so an upgrade
 *   does not notify anyone of older changes.
 * Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

const statements = [
  `ALTER TABLE projects ADD COLUMN notification_settings jsonb NOT NULL DEFAULT
    '{"email_enabled": false, "from_name": null, "from_address": null, "reply_to": null, "digest_minutes": 15, "board_url": null}'::jsonb`,
  "ALTER TABLE voters ADD COLUMN email_unsubscribed boolean NOT NULL DEFAULT false",
  `CREATE TABLE subscriptions (
    feature_id integer NOT NULL REFERENCES features(id) ON DELETE CASCADE,
    voter_id integer NOT NULL REFERENCES voters(id) ON DELETE CASCADE,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    reason text NOT NULL CHECK (reason IN ('author', 'vote', 'comment', 'manual', 'merge')),
    opted_out boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (feature_id, voter_id)
  )`,
  // A voter's subscriptions, newest first.
  "CREATE INDEX subscriptions_voter_idx ON subscriptions (voter_id, created_at DESC, feature_id DESC)",
  `CREATE TABLE notifications (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    voter_id integer NOT NULL REFERENCES voters(id) ON DELETE CASCADE,
    feature_id integer NOT NULL REFERENCES features(id) ON DELETE CASCADE,
    event_seq bigint NOT NULL,
    type text NOT NULL,
    data jsonb NOT NULL,
    read_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (event_seq, type, voter_id)
  )`,
  // A voter's inbox, newest first; and the unread count.
  "CREATE INDEX notifications_inbox_idx ON notifications (voter_id, id DESC)",
  "CREATE INDEX notifications_unread_idx ON notifications (voter_id) WHERE read_at IS NULL",
  "CREATE INDEX notifications_feature_idx ON notifications (feature_id)",
  "CREATE INDEX notifications_created_idx ON notifications (created_at)",
  `CREATE TABLE notification_cursor (
    id smallint PRIMARY KEY CHECK (id = 1),
    txid xid8 NOT NULL,
    seq bigint NOT NULL
  )`,
  `INSERT INTO notification_cursor (id, txid, seq)
    SELECT 1, COALESCE(last.txid, '0'::xid8), COALESCE(last.seq, 0)
    FROM (SELECT 1) AS one
    LEFT JOIN (SELECT txid, seq FROM events ORDER BY txid DESC, seq DESC LIMIT 1) AS last ON true`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["notification_cursor", "notifications", "subscriptions"]) {
    await sql.raw(`DROP TABLE IF EXISTS ${table}`).execute(db);
  }
  await sql.raw("ALTER TABLE voters DROP COLUMN IF EXISTS email_unsubscribed").execute(db);
  await sql.raw("ALTER TABLE projects DROP COLUMN IF EXISTS notification_settings").execute(db);
}
