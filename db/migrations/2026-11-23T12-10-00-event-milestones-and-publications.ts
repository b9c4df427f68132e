/**
 * What the events of owner-api-v3.md ("Events") need to be recorded exactly once:
 * - features.vote_milestone: the highest vote_count threshold (10, 25, 50, 100, 250, 500, 1000,
 *   then each 1000) already announced by feature.vote_milestone, or already passed when the
 *   feature arrived (this migration, a snapshot import). A vote that brings vote_count to a
 *   threshold above it records the event and raises it in the same statement, so a vote and a
 *   withdrawal oscillating around a threshold announce it once.
 * - releases.publication_recorded: release.published is recorded for the release's current
 *   publication. Set by the owner's write that makes a release public at once, or by the periodic
 *   task that claims scheduled releases whose time has come (UPDATE ... WHERE NOT
 *   publication_recorded: one claimer wins); cleared when the release goes back to draft or to a
 *   future time. releases_publication_due_idx holds only the releases still to announce.
 * Existing rows: features start at the threshold their vote_count has passed, releases already
 * public count as announced (nothing is announced for the past).
 * Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

const statements = [
  "ALTER TABLE features ADD COLUMN vote_milestone integer NOT NULL DEFAULT 0",
  "ALTER TABLE releases ADD COLUMN publication_recorded boolean NOT NULL DEFAULT false",
  `UPDATE features SET vote_milestone = CASE
      WHEN vote_count >= 1000 THEN vote_count / 1000 * 1000
      WHEN vote_count >= 500 THEN 500 WHEN vote_count >= 250 THEN 250 WHEN vote_count >= 100 THEN 100
      WHEN vote_count >= 50 THEN 50 WHEN vote_count >= 25 THEN 25 WHEN vote_count >= 10 THEN 10 ELSE 0 END
    WHERE vote_count >= 10`,
  "UPDATE releases SET publication_recorded = true WHERE published_at <= now()",
  `CREATE INDEX releases_publication_due_idx ON releases (published_at)
    WHERE NOT publication_recorded AND published_at IS NOT NULL`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const statement of [
    "DROP INDEX IF EXISTS releases_publication_due_idx",
    "ALTER TABLE releases DROP COLUMN IF EXISTS publication_recorded",
    "ALTER TABLE features DROP COLUMN IF EXISTS vote_milestone",
  ])
    await sql.raw(statement).execute(db);
}
