/**
 * State of the billing sync (owner-api-v3.md, "Billing sync"):
 * - billing_events: the id of every Stripe or Paddle event a project applied (or decided to
 *   skip), so a retried delivery changes nothing. Keyed by (project, system, event id): the
 *   unique insert is also what makes two concurrent deliveries of one event apply it once (the
 *   second waits for the first's transaction and then finds the row). `processed_at` lets old
 *   rows be pruned once no vendor retries them any more.
 * - billing_subscriptions: per (project, system, subscription id) the time of the last event
 *   applied to it; an older event arriving later changes nothing (out-of-order safe). The row is
 *   also the lock that orders concurrent events of one subscription.
 * Both cascade from projects, like every other table (a snapshot replace deletes the project row).
 * Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

const statements = [
  `CREATE TABLE billing_events (
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    system text NOT NULL CHECK (system IN ('stripe', 'paddle')),
    event_id text NOT NULL,
    event_type text NOT NULL,
    occurred_at timestamptz NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, system, event_id)
  )`,
  "CREATE INDEX billing_events_age_idx ON billing_events (project_id, processed_at)",
  `CREATE TABLE billing_subscriptions (
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    system text NOT NULL CHECK (system IN ('stripe', 'paddle')),
    subscription_id text NOT NULL,
    last_event_at timestamptz,
    last_event_id text,
    PRIMARY KEY (project_id, system, subscription_id)
  )`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw("DROP TABLE IF EXISTS billing_subscriptions").execute(db);
  await sql.raw("DROP TABLE IF EXISTS billing_events").execute(db);
}
