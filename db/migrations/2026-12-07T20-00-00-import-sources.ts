/**
 * import_sources: what an import made, by its source's own id (imports-v3.md, "How an import
 * runs" rule 4). One row per imported board, tag, voter, feature, vote, comment and release:
 * (project, source, kind, source id) -> the row it made (`target_id`; a vote's feature, with
 * `target_voter_id` its voter). A re-run looks the whole kind up at once and updates what it
 * finds. Rows are never deleted with their target: a mapping whose target is gone (a feature
 * deleted, a vote withdrawn) is the tombstone that keeps the record from being brought back.
 *
 * A voter has a row here only when an import made it (a voter matched by SSO id or email is
 * matched again on every run), so the row is also what makes a voter claimable (imports-v3.md,
 * "Claiming"); the partial index on voters finds those still without sso_id by lower(email).
 * Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE import_sources (
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    source text NOT NULL CHECK (source IN ('canny', 'fider', 'csv')),
    kind text NOT NULL CHECK (kind IN ('board', 'tag', 'voter', 'feature', 'vote', 'comment', 'release')),
    source_id text NOT NULL,
    target_id integer NOT NULL,
    target_voter_id integer,
    PRIMARY KEY (project_id, source, kind, source_id)
  )`.execute(db);
  // Finding the source of a row (snapshot export, claiming): by kind and target.
  await sql`CREATE INDEX import_sources_target_idx ON import_sources (project_id, kind, target_id)`.execute(db);
  await sql`CREATE INDEX voters_unclaimed_email_idx ON voters (project_id, lower(email))
    WHERE sso_id IS NULL AND email IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS voters_unclaimed_email_idx`.execute(db);
  await sql`DROP TABLE IF EXISTS import_sources`.execute(db);
}
