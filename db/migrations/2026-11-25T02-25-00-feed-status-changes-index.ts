/**
 * The roadmap Atom feed (engagement-api-v3.md, "Feeds") lists a project's latest
 * `feature.status_changed` events, newest first. Votes, comments and other events far outnumber
 * status changes, so walking events_project_position_idx backwards would read many rows per
 * entry; this partial index holds only status changes, in the feed's order (event time, then
 * seq), so a feed reads about as many index entries as it lists.
 * Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      "CREATE INDEX IF NOT EXISTS events_status_changed_idx ON events (project_id, created_at DESC, seq DESC) WHERE type = 'feature.status_changed'",
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw("DROP INDEX IF EXISTS events_status_changed_idx").execute(db);
}
