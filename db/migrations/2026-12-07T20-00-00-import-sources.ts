/**
 * import_sources: what an import made, by its source's own id (imports-v3.md, "How an import
 * runs" rule 4). One row per imported board, tag, voter, feature, vote, comment and release:
 * (project, source, kind, source id) -> the row it made (`target_id`; a vote's feature, with
 * `target_voter_id` its voter). A re-run looks the whole kind up at once and updates what it
 * finds. Rows are never deleted with their target: a mapping whose target is gone (a feature
 * deleted, a vote withdrawn) is the tombstone that keeps the record from being brought back.
 *
 * The partial index on voters serves SSO claiming (imports-v3.md, "Claiming"): only voters an
 * import made, still without sso_id, are looked up by lower(email).
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
  await sql`ALTER TABLE voters ADD COLUMN imported boolean NOT NULL DEFAULT false`.execute(db);
  await sql`CREATE INDEX voters_claimable_idx ON voters (project_id, lower(email))
    WHERE imported AND sso_id IS NULL AND email IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS voters_claimable_idx`.execute(db);
  await sql`ALTER TABLE voters DROP COLUMN IF EXISTS imported`.execute(db);
  await sql`DROP TABLE IF EXISTS import_sources`.execute(db);
}
