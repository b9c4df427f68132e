/**
 * What similar-feature search (engagement-api-v3.md, "Similar features") reads, one row per
 * feature in `feature_similarity`, kept by a row trigger on INSERT and on UPDATE OF heading,
 * description (a counter update does not fire it, and the table sits outside `features` so that
 * votes leave its indexes alone, as with feature_search):
 *
 * - heading_norm: the heading in lower case, white space runs collapsed, leading and trailing
 *   white space and punctuation removed (feature_similarity_norm), btree-indexed for equality
 *   (trigram similarity is computed only for the few candidates the other keys find: a trigram
 *   index cannot bound its work on a board whose headings share a small vocabulary);
 * - heading_words / description_words: the English lexemes (stemmed, stop words dropped) of the
 *   heading and of the description, GIN-indexed for word matches;
 * - word_key: heading_words joined, btree-indexed: equal keys = same words in any order and form;
 * - feature_similarity_postings: one row per heading lexeme (project_id, word, heading_size,
 *   feature_id), btree-ordered so that the features sharing a word with q come fewest lexemes
 *   first: a bounded lookup of the best single-word partial matches;
 * - typo_keys: hashes of heading_norm and of every string it gives with one character deleted,
 *   GIN-indexed: two headings one typo apart (insertion, deletion, substitution, transposition)
 *   always share a key (the symmetric-deletion method).
 *
 * Loads that bypass triggers call rebuild_feature_search(project_id), which now rebuilds these
 * rows too. pg_trgm gives similarity(); fuzzystrmatch gives levenshtein(), used to confirm a
 * one-typo match; btree_gin lets the GIN indexes lead with project_id, so that a small project's
 * lookups skip a large one's entries. The score is in
 * src/routes/features/features.similar.repository.ts and docs/decisions.md. Frozen once shipped.
 */
import { type Kysely, sql } from "kysely";

const statements = [
  "CREATE EXTENSION IF NOT EXISTS pg_trgm",
  "CREATE EXTENSION IF NOT EXISTS fuzzystrmatch",
  // GIN indexes that lead with project_id: a small project's lookups skip the big ones' entries.
  "CREATE EXTENSION IF NOT EXISTS btree_gin",
  // Typographic quotes, dashes and ellipses count as punctuation whatever the database's locale.
  `CREATE FUNCTION feature_similarity_norm(input text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT regexp_replace(regexp_replace(lower(coalesce(input, '')), '\\s+', ' ', 'g'),
      '^[[:space:][:punct:]…‘’“”«»‹›–—¡¿·•]+|[[:space:][:punct:]…‘’“”«»‹›–—¡¿·•]+$', '', 'g')
  $$`,
  `CREATE FUNCTION feature_similarity_words(input text) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT tsvector_to_array(to_tsvector('english'::regconfig, coalesce(input, '')))
  $$`,
  `CREATE FUNCTION feature_similarity_typo_keys(norm text) RETURNS integer[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_agg(DISTINCT key) FROM (
      SELECT hashtext(norm) AS key
      UNION ALL
      SELECT hashtext(overlay(norm placing '' from i for 1)) FROM generate_series(1, length(norm)) AS i
    ) AS keys
  $$`,
  `CREATE TABLE feature_similarity (
    feature_id integer PRIMARY KEY REFERENCES features(id) ON DELETE CASCADE,
    project_id integer NOT NULL,
    heading_norm text NOT NULL,
    word_key text NOT NULL,
    heading_words text[] NOT NULL,
    description_words text[] NOT NULL,
    typo_keys integer[] NOT NULL
  )`,
  // One row per heading lexeme, in the order a partial match by one shared word is best:
  // fewest heading lexemes first (the highest Jaccard index), so a lookup stops after a few rows.
  `CREATE TABLE feature_similarity_postings (
    project_id integer NOT NULL,
    word text NOT NULL,
    heading_size integer NOT NULL,
    feature_id integer NOT NULL REFERENCES features(id) ON DELETE CASCADE,
    PRIMARY KEY (project_id, word, heading_size, feature_id)
  )`,
  "CREATE INDEX feature_similarity_postings_feature_idx ON feature_similarity_postings (feature_id)",
  `CREATE FUNCTION feature_similarity_upsert(p_feature integer) RETURNS void LANGUAGE sql AS $$
    INSERT INTO feature_similarity (feature_id, project_id, heading_norm, word_key, heading_words, description_words, typo_keys)
    SELECT f.id, f.project_id, n.norm, array_to_string(w.words, ' '), w.words,
      feature_similarity_words(f.description), feature_similarity_typo_keys(n.norm)
    FROM features f
    CROSS JOIN LATERAL (SELECT feature_similarity_norm(f.heading) AS norm) n
    CROSS JOIN LATERAL (SELECT feature_similarity_words(f.heading) AS words) w
    WHERE f.id = p_feature
    ON CONFLICT (feature_id) DO UPDATE SET project_id = EXCLUDED.project_id, heading_norm = EXCLUDED.heading_norm,
      word_key = EXCLUDED.word_key, heading_words = EXCLUDED.heading_words,
      description_words = EXCLUDED.description_words, typo_keys = EXCLUDED.typo_keys;
    DELETE FROM feature_similarity_postings WHERE feature_id = p_feature;
    INSERT INTO feature_similarity_postings (project_id, word, heading_size, feature_id)
    SELECT s.project_id, w.word, cardinality(s.heading_words), s.feature_id
    FROM feature_similarity s CROSS JOIN LATERAL unnest(s.heading_words) AS w(word)
    WHERE s.feature_id = p_feature;
  $$`,
  `INSERT INTO feature_similarity (feature_id, project_id, heading_norm, word_key, heading_words, description_words, typo_keys)
    SELECT f.id, f.project_id, n.norm, array_to_string(w.words, ' '), w.words,
      feature_similarity_words(f.description), feature_similarity_typo_keys(n.norm)
    FROM features f
    CROSS JOIN LATERAL (SELECT feature_similarity_norm(f.heading) AS norm) n
    CROSS JOIN LATERAL (SELECT feature_similarity_words(f.heading) AS words) w`,
  `INSERT INTO feature_similarity_postings (project_id, word, heading_size, feature_id)
    SELECT s.project_id, w.word, cardinality(s.heading_words), s.feature_id
    FROM feature_similarity s CROSS JOIN LATERAL unnest(s.heading_words) AS w(word)`,
  "CREATE INDEX feature_similarity_heading_words_idx ON feature_similarity USING gin (project_id, heading_words)",
  "CREATE INDEX feature_similarity_description_words_idx ON feature_similarity USING gin (project_id, description_words)",
  "CREATE INDEX feature_similarity_typo_keys_idx ON feature_similarity USING gin (project_id, typo_keys)",
  "CREATE INDEX feature_similarity_exact_idx ON feature_similarity (project_id, heading_norm)",
  "CREATE INDEX feature_similarity_word_key_idx ON feature_similarity (project_id, word_key)",
  `CREATE FUNCTION feature_similarity_sync() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM feature_similarity_upsert(NEW.id);
    RETURN NULL;
  END $$`,
  `CREATE TRIGGER features_similarity_sync AFTER INSERT OR UPDATE OF heading, description ON features
    FOR EACH ROW EXECUTE FUNCTION feature_similarity_sync()`,
  // Planner statistics for the new table now, not whenever autovacuum gets to it.
  "ANALYZE feature_similarity",
  "ANALYZE feature_similarity_postings",
  // The bench generator and any load that skips triggers already call this one after loading.
  `CREATE OR REPLACE FUNCTION rebuild_feature_search(p_project integer) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO feature_search (feature_id, search_text)
    SELECT f.id, lower(f.heading || ' ' || coalesce(f.description, '')) FROM features f WHERE f.project_id = p_project
    ON CONFLICT (feature_id) DO UPDATE SET search_text = EXCLUDED.search_text;
    PERFORM feature_similarity_upsert(f.id) FROM features f WHERE f.project_id = p_project;
  END $$`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const statement of [
    "DROP TRIGGER IF EXISTS features_similarity_sync ON features",
    "DROP FUNCTION IF EXISTS feature_similarity_sync()",
    "DROP TABLE IF EXISTS feature_similarity_postings",
    "DROP TABLE IF EXISTS feature_similarity",
    "DROP FUNCTION IF EXISTS feature_similarity_upsert(integer)",
    "DROP FUNCTION IF EXISTS feature_similarity_typo_keys(text)",
    "DROP FUNCTION IF EXISTS feature_similarity_words(text)",
    "DROP FUNCTION IF EXISTS feature_similarity_norm(text)",
    `CREATE OR REPLACE FUNCTION rebuild_feature_search(p_project integer) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO feature_search (feature_id, search_text)
      SELECT f.id, lower(f.heading || ' ' || coalesce(f.description, '')) FROM features f WHERE f.project_id = p_project
      ON CONFLICT (feature_id) DO UPDATE SET search_text = EXCLUDED.search_text;
    END $$`,
  ])
    await sql.raw(statement).execute(db);
}
