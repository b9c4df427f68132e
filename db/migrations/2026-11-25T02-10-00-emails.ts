/**
 * Email notifications (engagement-api-v3.md, "Email notifications"; docs/email.md).
 * - notifications.email_state: where a notification stands in the email pipeline. `new`: not
 *   yet looked at (or inside its digest window); `skipped`: no email for it (email off, voter not
 *   eligible, already read, or too old when first seen); `queued`: it went into an `emails` row.
 *   The partial index keeps the gatherer's scan to the notifications still `new`.
 * - emails: one row per email (the owner's log, EmailObject). `notification_ids` are those the
 *   email holds (at each attempt the ones read or deleted since are left out). `claim_token` and
 *   `next_attempt_at` are the claim: a sender sets both (the lease) in a committed statement
 *   before it talks SMTP, and records the outcome only while its token is still there. Erasing
 *   a voter deletes their emails (cascade).
 * - service_secrets: secrets every instance shares through the database, made here once with
 *   Postgres's strong random source: `unsubscribe` signs the unsubscribe tokens.
 * Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

const statements = [
  `ALTER TABLE notifications ADD COLUMN email_state text NOT NULL DEFAULT 'new'
    CHECK (email_state IN ('new', 'skipped', 'queued'))`,
  "CREATE INDEX notifications_email_new_idx ON notifications (voter_id, created_at) WHERE email_state = 'new'",
  `CREATE TABLE emails (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    voter_id integer NOT NULL REFERENCES voters(id) ON DELETE CASCADE,
    to_address text NOT NULL,
    subject text NOT NULL,
    notification_ids bigint[] NOT NULL,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    claim_token text,
    message_id text NOT NULL UNIQUE,
    sent_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  // The owner's log, newest first, with or without the status filter.
  "CREATE INDEX emails_project_idx ON emails (project_id, id DESC)",
  "CREATE INDEX emails_project_status_idx ON emails (project_id, status, id DESC)",
  // The senders' claim: pending emails by due time.
  "CREATE INDEX emails_due_idx ON emails (next_attempt_at) WHERE status = 'pending'",
  "CREATE INDEX emails_voter_idx ON emails (voter_id)",
  `CREATE TABLE service_secrets (
    name text PRIMARY KEY,
    secret text NOT NULL
  )`,
  `INSERT INTO service_secrets (name, secret)
    VALUES ('unsubscribe', encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex'))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw("DROP TABLE IF EXISTS service_secrets").execute(db);
  await sql.raw("DROP TABLE IF EXISTS emails").execute(db);
  await sql.raw("ALTER TABLE notifications DROP COLUMN IF EXISTS email_state").execute(db);
}
