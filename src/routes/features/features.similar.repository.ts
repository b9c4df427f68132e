/**
 * Similar-feature search (engagement-api-v3.md, "Similar features"): ranks the features of a
 * project against a text by the similarity score below, computed in Postgres over
 * `feature_similarity` (migration 2026-11-25T02-20-00) and its indexes. docs/decisions.md,
 * "Similar features: the score", gives the formula and what is and is not found.
 *
 * Score of a feature for a text q (both normalized: lower case, white space collapsed, leading
 * and trailing white space and punctuation removed):
 * - 1.0 when the heading equals q;
 * - a near-duplicate, 0.85 + 0.1 x trigram similarity (0.85 to 0.95): the same English
 *   lexemes as q in any order (reordered words, plural or other inflected endings, inner
 *   punctuation, stop words), or one typo apart (one insertion, deletion, substitution or
 *   transposition of adjacent characters, sharing at least one trigram);
 * - otherwise a partial match, at most 0.8: 0.8 x (1 - (1 - H) x (1 - D / 2)) where H, the
 *   heading's match, is the larger of the trigram similarity (counted from 0.3) and the Jaccard
 *   index of the lexemes, and D, the description's, is the share of q's lexemes it contains.
 * A feature sharing no lexeme and no trigram with q scores 0. Listed: a score of at least 0.3.
 *
 * The work per query is bounded whatever the board's size: only candidates are scored, those the
 * exact keys find (the heading, the lexeme key, the typo keys: the near-duplicates), the
 * headings and descriptions holding every lexeme of q, and for each lexeme of q the headings
 * holding it with the fewest lexemes; each lookup has its own LIMIT (candidatesOf). A partial
 * match outside them is not listed (docs/decisions.md says which). q's keys are computed once,
 * in the statement, so its text depends only on the visibility shape and Postgres reuses a
 * generic plan of the prepared statement.
 */
import { type ExpressionBuilder, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { Database, ProjectSettings } from "../../../db/schema.ts";
import type { AdminFeatureRow } from "./features.owner.repository.ts";
import { adminRows } from "./features.owner.repository.ts";
import type { FeatureRow } from "./features.repository.ts";
import { withFeatureColumns } from "./features.repository.ts";
import { visibleTo } from "./features.visibility.ts";

type Project = { id: number; settings: ProjectSettings };

/** The lowest similarity listed (engagement-api-v3.md, "Similar features"). */
export const SIMILARITY_THRESHOLD = 0.3;
/** The lowest score of a near-duplicate; a partial match scores at most PARTIAL_MATCH_MAX. */
const NEAR_DUPLICATE_MIN = 0.85;

/** Who is searching: the public (a voter or nobody) or the owner, and what to leave out. */
export type SimilarityScope = { kind: "public"; voterId: number | null } | { kind: "owner"; excludeId: number | null };

/** One ranked feature: id, similarity rounded to 3 decimals. */
export interface RankedFeature {
  id: number;
  similarity: number;
}

/** Caps of the bounded retrieval: near-duplicate keys, then all of q's words (each branch). */
const NEAR_CANDIDATES = 100;
const WORD_CANDIDATES = 40;
/** q's lexemes looked up one by one (the first in lexeme order), and the features read for each. */
const WORDS_LOOKED_UP = 10;
const PER_WORD_CANDIDATES = 10;

/**
 * The candidates of the project for `text` (1..254 characters), one row each with q's normal
 * form, lexemes, lexeme key and typo keys, computed once in the CTE q so that the statement's
 * text never depends on q (one prepared statement, one generic plan). Each branch is an index
 * lookup with its own LIMIT, so no query scores more than 280 rows whatever the board's size:
 * the near-duplicate keys (btree on heading_norm and word_key, GIN on typo_keys), the headings
 * and the descriptions holding every lexeme of q (GIN `@>`), and for each of q's first
 * WORDS_LOOKED_UP lexemes the features whose heading holds it, fewest heading lexemes first
 * (btree feature_similarity_postings: the best matches by one shared word).
 */
function candidatesOf(projectId: number, text: string) {
  return sql<{ feature_id: number; norm: string; words: string[]; word_key: string; typo_keys: number[] }>`(
    WITH q AS MATERIALIZED (
      SELECT n.norm, w.words, array_to_string(w.words, ' ') AS word_key,
        coalesce(feature_similarity_typo_keys(n.norm), '{}') AS typo_keys
      FROM (SELECT feature_similarity_norm(${text}::text) AS norm) AS n,
        (SELECT coalesce(feature_similarity_words(${text}::text), '{}') AS words) AS w
    ), ids AS (
      (SELECT s.feature_id FROM feature_similarity s
        WHERE s.project_id = ${projectId}::int AND (s.heading_norm = (SELECT norm FROM q)
          OR s.word_key = nullif((SELECT word_key FROM q), '') OR s.typo_keys && (SELECT typo_keys FROM q))
        LIMIT ${sql.lit(NEAR_CANDIDATES)})
      UNION
      (SELECT s.feature_id FROM feature_similarity s
        WHERE s.project_id = ${projectId}::int AND (SELECT words FROM q) <> '{}' AND s.heading_words @> (SELECT words FROM q)
        LIMIT ${sql.lit(WORD_CANDIDATES)})
      UNION
      (SELECT s.feature_id FROM feature_similarity s
        WHERE s.project_id = ${projectId}::int AND (SELECT words FROM q) <> '{}' AND s.description_words @> (SELECT words FROM q)
        LIMIT ${sql.lit(WORD_CANDIDATES)})
      UNION
      (SELECT p.feature_id FROM unnest((SELECT words FROM q)[1:${sql.lit(WORDS_LOOKED_UP)}]) AS w(word)
        CROSS JOIN LATERAL (SELECT p.feature_id FROM feature_similarity_postings p
          WHERE p.project_id = ${projectId}::int AND p.word = w.word
          ORDER BY p.heading_size, p.feature_id LIMIT ${sql.lit(PER_WORD_CANDIDATES)}) AS p)
    )
    -- A text of punctuation only has no normal form: nothing is similar to it.
    SELECT ids.feature_id, q.norm, q.words, q.word_key, q.typo_keys FROM ids, q WHERE q.norm <> '')`;
}

/** How many of q's lexemes (candidate alias `cand`) the lexeme array `column` holds. */
function sharedWords(column: string) {
  return sql<number>`(SELECT count(*) FROM unnest(cand.words) AS w WHERE w = ANY(${sql.ref(column)}))`;
}

/**
 * The components of the score of a candidate (alias cand, joined with its feature_similarity
 * row), each computed once (a LATERAL subquery kept apart by OFFSET 0, or the planner would
 * inline and repeat them): ts heading trigram similarity, near (a near-duplicate key matches),
 * hw heading lexemes' Jaccard index, dw share of q's lexemes in the description.
 */
interface Components {
  ts: number;
  near: boolean;
  hw: number;
  dw: number;
}

const components = (() => {
  const norm = sql`cand.norm`;
  const heading = sql`feature_similarity.heading_norm`;
  // levenshtein counts a transposition as two edits; an adjacent swap is one typo.
  const oneTypo = sql<boolean>`(feature_similarity.typo_keys && cand.typo_keys AND length(${heading}) <= 255 AND CASE
      WHEN levenshtein(${heading}, ${norm}) <= 1 THEN true
      WHEN length(${heading}) = length(${norm}) AND levenshtein(${heading}, ${norm}) = 2 THEN EXISTS (
        SELECT 1 FROM generate_series(1, length(${norm}) - 1) AS i
        WHERE overlay(${norm} placing substr(${norm}, i + 1, 1) || substr(${norm}, i, 1) from i for 2) = ${heading})
      ELSE false END)`;
  const headingShared = sharedWords("feature_similarity.heading_words");
  return sql<Components>`(SELECT similarity(${heading}, ${norm}) AS ts,
      ((cand.word_key <> '' AND feature_similarity.word_key = cand.word_key) OR ${oneTypo}) AS near,
      -- Jaccard index: shared / (|heading's| + |q's| - shared); 0 when q has no lexeme.
      coalesce(${headingShared}::float8 / nullif(cardinality(feature_similarity.heading_words) + cardinality(cand.words) - ${headingShared}, 0), 0) AS hw,
      coalesce(${sharedWords("feature_similarity.description_words")}::float8 / nullif(cardinality(cand.words), 0), 0) AS dw
    OFFSET 0)`;
})();

/** The score from components (alias c), unrounded. */
const score = (() => {
  const heading = sql<number>`greatest(CASE WHEN c.ts >= 0.3 THEN c.ts ELSE 0 END, c.hw)`;
  // A one-typo match must also share a trigram: two one-letter headings share none.
  return sql<number>`CASE
    WHEN feature_similarity.heading_norm = cand.norm THEN 1.0
    WHEN c.near AND c.ts > 0 THEN ${sql.lit(NEAR_DUPLICATE_MIN)} + 0.1 * c.ts
    ELSE 0.8 * (1 - (1 - ${heading}) * (1 - c.dw / 2)) END`;
})();

/**
 * The `limit` features most similar to `text` (1..254 characters, already trimmed) that `scope`
 * may see, highest similarity first, then vote_count, then id; only those of at least 0.3;
 * merged duplicates never. Returns ids with their similarity (0..1, 3 decimals). One statement:
 * the bounded candidates of candidatesOf, scored; its text depends only on the visibility shape.
 */
export async function rankSimilarFeatures(
  db: Db,
  project: Project,
  text: string,
  scope: SimilarityScope,
  limit: number,
): Promise<RankedFeature[]> {
  let scored = db
    .selectFrom(candidatesOf(project.id, text).as("cand"))
    .innerJoin("features", "features.id", "cand.feature_id")
    .innerJoin("feature_similarity", "feature_similarity.feature_id", "cand.feature_id")
    .innerJoinLateral(components.as("c"), (join) => join.onTrue())
    .where("features.project_id", "=", project.id)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom("feature_merges").select("feature_merges.id").whereRef("feature_merges.source_id", "=", "features.id"))),
    );
  if (scope.kind === "public") {
    scored = scored.where((eb) => visibleTo(project.settings, scope.voterId)(eb as unknown as ExpressionBuilder<Database, "features">));
  } else {
    // Always present (-1 for none), so that both cases share one statement.
    scored = scored.where("features.id", "<>", scope.excludeId ?? -1);
  }
  const inner = scored
    .select(["features.id", "features.vote_count", sql<number>`round((${score})::numeric, 3)`.as("similarity")])
    .as("scored");
  const rows = await db
    .selectFrom(inner)
    .select(["scored.id", "scored.similarity"])
    .where("scored.similarity", ">=", sql<number>`${sql.lit(SIMILARITY_THRESHOLD)}::numeric`)
    .orderBy("scored.similarity", "desc")
    .orderBy("scored.vote_count", "desc")
    .orderBy("scored.id", "asc")
    .limit(limit)
    .execute();
  return rows.map((row) => ({ id: row.id, similarity: Number(row.similarity) }));
}

/** The public rows (FeatureRow, has_voted for `voterId`) of `ids`, in the order given. */
export async function findSimilarFeatureRows(
  db: Db,
  project: Project,
  ids: number[],
  options: { voterId: number | null; now: Date },
): Promise<FeatureRow[]> {
  if (ids.length === 0) return [];
  const query = db.selectFrom("features").where("features.id", "in", ids).where("features.project_id", "=", project.id);
  const rows = (await withFeatureColumns(db, query, project, options.voterId, options.now).execute()) as FeatureRow[];
  return inOrder(rows, ids);
}

/** The owner's rows (AdminFeatureRow) of `ids`, in the order given. */
export async function findSimilarAdminRows(db: Db, project: Project, ids: number[], now: Date): Promise<AdminFeatureRow[]> {
  if (ids.length === 0) return [];
  const query = db.selectFrom("features").where("features.id", "in", ids).where("features.project_id", "=", project.id);
  return inOrder((await adminRows(db, query, project, now).execute()) as AdminFeatureRow[], ids);
}

/** The heading of feature `featureId` of the project; undefined when it has none. */
export async function findFeatureHeading(db: Db, projectId: number, featureId: number): Promise<string | undefined> {
  const row = await db
    .selectFrom("features")
    .select("heading")
    .where("id", "=", featureId)
    .where("project_id", "=", projectId)
    .executeTakeFirst();
  return row?.heading;
}

function inOrder<T extends { id: number }>(rows: T[], ids: number[]): T[] {
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    return row ? [row] : [];
  });
}
