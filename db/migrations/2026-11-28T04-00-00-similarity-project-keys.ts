/**
 * The GIN lookups of similar-feature search (features.similar.repository.ts candidatesOf) keyed
 * by project and word instead of by the two apart.
 *
 * The indexes of 2026-11-25T02-20-00 were GIN (project_id, heading_words) and the like: each
 * lookup intersected q's keys with the project's own posting list, which holds every feature of
 * the project, so a lookup on a board of 100,000 features cost 0.3-1.0 ms however few headings
 * held the words (docs/benchmarks.md, "What was tried": GIN keys that carry their project). Here
 * each key carries its project: `2:email` for the lexeme email of project 2, and
 * (project << 32) | key for a typo key, in expression indexes, so the table's rows do not grow
 * and its trigger is unchanged. The statement keeps `project_id = $1` beside each lookup.
 *
 * feature_similarity_project_words(project, words): text[], each lexeme as `<project>:<lexeme>`.
 * feature_similarity_project_keys(project, keys): bigint[], each 32-bit key as (project << 32) |
 * (key & 0xffffffff), so that keys of two projects never meet.
 * Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE FUNCTION feature_similarity_project_words(project integer, words text[])
    RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT ARRAY(SELECT project::text || ':' || w FROM unnest(words) AS w)
    $$`.execute(db);
  await sql`CREATE FUNCTION feature_similarity_project_keys(project integer, keys integer[])
    RETURNS bigint[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT ARRAY(SELECT (project::bigint << 32) | (k::bigint & 4294967295) FROM unnest(keys) AS k)
    $$`.execute(db);
  await sql`CREATE INDEX feature_similarity_project_heading_words_idx ON feature_similarity
    USING gin (feature_similarity_project_words(project_id, heading_words))`.execute(db);
  await sql`CREATE INDEX feature_similarity_project_description_words_idx ON feature_similarity
    USING gin (feature_similarity_project_words(project_id, description_words))`.execute(db);
  await sql`CREATE INDEX feature_similarity_project_typo_keys_idx ON feature_similarity
    USING gin (feature_similarity_project_keys(project_id, typo_keys))`.execute(db);
  // Left beside the new ones, the planner ANDs their project_id column (every feature of the
  // project) into the new lookups.
  await sql`DROP INDEX feature_similarity_heading_words_idx`.execute(db);
  await sql`DROP INDEX feature_similarity_description_words_idx`.execute(db);
  await sql`DROP INDEX feature_similarity_typo_keys_idx`.execute(db);
  await sql`ANALYZE feature_similarity`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ["heading_words", "description_words", "typo_keys"]) {
    await sql.raw(`CREATE INDEX feature_similarity_${column}_idx ON feature_similarity USING gin (project_id, ${column})`).execute(db);
    await sql.raw(`DROP INDEX feature_similarity_project_${column}_idx`).execute(db);
  }
  await sql`DROP FUNCTION feature_similarity_project_words(integer, text[])`.execute(db);
  await sql`DROP FUNCTION feature_similarity_project_keys(integer, integer[])`.execute(db);
}
