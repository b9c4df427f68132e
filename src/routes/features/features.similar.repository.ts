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
 * in the statement, and the answer's rows (FeatureRow, or AdminFeatureRow for the owner) are
 * read by the same statement: one round trip, compiled once per shape (db/query-template.ts),
 * whose text depends only on the visibility shape, run with one generic plan per connection.
 */
import { type Compilable, type Expression, type ExpressionBuilder, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import { QueryTemplate } from "../../../db/query-template.ts";
import type { Database, ProjectSettings } from "../../../db/schema.ts";
import type { AdminFeatureRow } from "./features.owner.repository.ts";
import { adminRows } from "./features.owner.repository.ts";
import type { FeatureQuery, FeatureRow } from "./features.repository.ts";
import { withFeatureColumns } from "./features.repository.ts";
import { visibilityShapeKey, visibleTo } from "./features.visibility.ts";

type Project = { id: number; settings: ProjectSettings };

/** The lowest similarity listed (engagement-api-v3.md, "Similar features"). */
export const SIMILARITY_THRESHOLD = 0.3;
/** The lowest score of a near-duplicate; a partial match scores at most PARTIAL_MATCH_MAX. */
const NEAR_DUPLICATE_MIN = 0.85;

/** Caps of the bounded retrieval: near-duplicate keys, then all of q's words (each branch). */
const NEAR_CANDIDATES = 100;
const WORD_CANDIDATES = 40;
/** q's lexemes looked up one by one (the first in lexeme order), and the features read for each. */
const WORDS_LOOKED_UP = 10;
const PER_WORD_CANDIDATES = 10;

/**
 * The candidates of the project for `text` (1..254 characters), one row each with q's normal
 * form, lexemes, lexeme key and adjacent swaps, computed once in the CTE q with q's index keys
 * so that the statement's text never depends on q (one prepared statement, one generic plan).
 * Each branch is an index lookup with its own LIMIT, so no query scores more than 280 rows
 * whatever the board's size: the near-duplicate keys (btree on heading_norm and word_key, GIN on
 * the typo keys), the headings and the descriptions holding every lexeme of q (GIN `@>`), and
 * for each of q's first WORDS_LOOKED_UP lexemes the features whose heading holds it, fewest
 * heading lexemes first (btree feature_similarity_postings: the best matches by one shared word).
 * The GIN keys carry their project (migration 2026-11-28T04-00-00), so a lookup reads only that
 * project's entries.
 */
function candidatesOf(projectId: number, text: Expression<string>) {
  return sql<{ feature_id: number; norm: string; words: string[]; word_key: string; swaps: string[] }>`(
    WITH q AS MATERIALIZED (
      -- q's keys as the indexes hold them (migration 2026-11-28T04-00-00): lexemes as
      -- feature_similarity_project_words writes them, typo keys as feature_similarity_typo_keys
      -- then feature_similarity_project_keys compute them. Written out: a SQL function with FROM,
      -- an aggregate or a subquery is not inlined, and Postgres would plan its body on every call.
      -- OFFSET 0 keeps n and w apart: pulled up, the inlined norm and lexeme functions were
      -- computed again at each reference, once per typo key (docs/benchmarks.md, "What was tried").
      SELECT n.norm, w.words, array_to_string(w.words, ' ') AS word_key,
        ARRAY(SELECT ${projectId}::int::text || ':' || x FROM unnest(w.words) AS x) AS project_words,
        ARRAY(SELECT (${projectId}::int::bigint << 32) | (k.key::bigint & 4294967295) FROM (
          SELECT hashtext(n.norm) AS key
          UNION
          SELECT hashtext(overlay(n.norm placing '' from i for 1)) FROM generate_series(1, length(n.norm)) AS i
        ) AS k) AS project_typo_keys,
        -- q with each pair of adjacent characters swapped: a heading equal to one is one typo away.
        ARRAY(SELECT overlay(n.norm placing substr(n.norm, i + 1, 1) || substr(n.norm, i, 1) from i for 2)
          FROM generate_series(1, length(n.norm) - 1) AS i) AS swaps
      FROM (SELECT ${text} AS text) AS t,
        LATERAL (SELECT feature_similarity_norm(t.text) AS norm OFFSET 0) AS n,
        LATERAL (SELECT coalesce(feature_similarity_words(t.text), '{}') AS words OFFSET 0) AS w
    ), ids AS (
      (SELECT s.feature_id FROM feature_similarity s
        WHERE s.project_id = ${projectId}::int AND (s.heading_norm = (SELECT norm FROM q)
          OR s.word_key = nullif((SELECT word_key FROM q), '')
          OR feature_similarity_project_keys(s.project_id, s.typo_keys) && (SELECT project_typo_keys FROM q))
        LIMIT ${sql.lit(NEAR_CANDIDATES)})
      UNION
      (SELECT s.feature_id FROM feature_similarity s
        WHERE s.project_id = ${projectId}::int AND (SELECT words FROM q) <> '{}'
          AND feature_similarity_project_words(s.project_id, s.heading_words) @> (SELECT project_words FROM q)
        LIMIT ${sql.lit(WORD_CANDIDATES)})
      UNION
      (SELECT s.feature_id FROM feature_similarity s
        WHERE s.project_id = ${projectId}::int AND (SELECT words FROM q) <> '{}'
          AND feature_similarity_project_words(s.project_id, s.description_words) @> (SELECT project_words FROM q)
        LIMIT ${sql.lit(WORD_CANDIDATES)})
      UNION
      (SELECT p.feature_id FROM unnest((SELECT words FROM q)[1:${sql.lit(WORDS_LOOKED_UP)}]) AS w(word)
        CROSS JOIN LATERAL (SELECT p.feature_id FROM feature_similarity_postings p
          WHERE p.project_id = ${projectId}::int AND p.word = w.word
          ORDER BY p.heading_size, p.feature_id LIMIT ${sql.lit(PER_WORD_CANDIDATES)}) AS p)
    )
    -- A text of punctuation only has no normal form: nothing is similar to it.
    SELECT ids.feature_id, q.norm, q.words, q.word_key, q.swaps FROM ids, q WHERE q.norm <> '')`;
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
  // One typo apart: at most one edit (levenshtein_less_equal stops once the distance passes its
  // bound; it takes at most 255 characters), or a swap of two adjacent characters, which
  // levenshtein counts as two edits: one of q's swaps, computed once in candidatesOf. No typo-key
  // test first: two strings one typo apart always share a typo key, so it decided nothing.
  const oneTypo = sql<boolean>`(length(${heading}) <= 255 AND abs(length(${heading}) - length(${norm})) <= 1
      AND (levenshtein_less_equal(${heading}, ${norm}, 1) <= 1 OR ${heading} = ANY(cand.swaps)))`;
  // q's lexemes found in the heading and in the description, counted in one pass over them.
  return sql<Components>`(SELECT similarity(${heading}, ${norm}) AS ts,
      ((cand.word_key <> '' AND feature_similarity.word_key = cand.word_key) OR ${oneTypo}) AS near,
      -- Jaccard index: shared / (|heading's| + |q's| - shared); 0 when q has no lexeme.
      coalesce(shared.heading::float8 / nullif(cardinality(feature_similarity.heading_words) + cardinality(cand.words) - shared.heading, 0), 0) AS hw,
      coalesce(shared.description::float8 / nullif(cardinality(cand.words), 0), 0) AS dw
    FROM (SELECT count(*) FILTER (WHERE w = ANY(feature_similarity.heading_words)) AS heading,
        count(*) FILTER (WHERE w = ANY(feature_similarity.description_words)) AS description
      FROM unnest(cand.words) AS w) AS shared
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

/** What makes two similar-features statements different (db/query-template.ts). */
interface SimilarShape {
  /** The public's rule (visibility, has_voted) or the owner's (every feature, AdminFeatureRow). */
  kind: "public" | "owner";
  /** Only show_denied and show_archived shape the statement (visibilityShapeKey). */
  settings: ProjectSettings;
  /** Public: a voter's identity (their own suggestions listed, has_voted computed). */
  voter: boolean;
  /** Owner: the text is the heading of feature `featureId` (read in the statement). */
  byFeature: boolean;
}

interface SimilarValues {
  projectId: number;
  /** The text compared ("" when byFeature). */
  text: string;
  /** Owner: the feature whose heading is compared and which is left out (-1 for none). */
  featureId: number;
  voterId: number;
  limit: number;
  now: Date;
}

/** A FeatureRow (or AdminFeatureRow) with its similarity, numeric(4,3) as the driver hands it. */
type SimilarRow<Row> = Row & { similarity: number | string };

/**
 * The ranking of candidatesOf under `shape`'s visibility: ids, vote_count and similarity of the
 * features scoring at least SIMILARITY_THRESHOLD, best first, at most `limit`.
 */
function rankingOf(db: Db, shape: SimilarShape, values: SimilarValues) {
  const text = shape.byFeature
    ? sql<string>`(SELECT features.heading FROM features WHERE features.id = ${values.featureId} AND features.project_id = ${values.projectId})`
    : sql<string>`${values.text}::text`;
  let scored = db
    .selectFrom(candidatesOf(values.projectId, text).as("cand"))
    .innerJoin("features", "features.id", "cand.feature_id")
    .innerJoin("feature_similarity", "feature_similarity.feature_id", "cand.feature_id")
    .innerJoinLateral(components.as("c"), (join) => join.onTrue())
    .where("features.project_id", "=", values.projectId)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom("feature_merges").select("feature_merges.id").whereRef("feature_merges.source_id", "=", "features.id"))),
    );
  if (shape.kind === "public") {
    const visible = visibleTo(shape.settings, shape.voter ? values.voterId : null);
    scored = scored.where((eb) => visible(eb as unknown as ExpressionBuilder<Database, "features">));
  } else {
    // Always present (-1 for none), so that a text and a feature share the statement's shape.
    scored = scored.where("features.id", "<>", values.featureId);
  }
  const inner = scored
    .select(["features.id", "features.vote_count", sql<string>`round((${score})::numeric, 3)`.as("similarity")])
    .as("scored");
  return db
    .selectFrom(inner)
    .select(["scored.id", "scored.similarity"])
    .where("scored.similarity", ">=", sql<string>`${sql.lit(SIMILARITY_THRESHOLD)}::numeric`)
    .orderBy("scored.similarity", "desc")
    .orderBy("scored.vote_count", "desc")
    .orderBy("scored.id", "asc")
    .limit(values.limit);
}

/**
 * The whole answer in one statement, compiled once per shape: the ranking (a materialized CTE,
 * so its plan stays apart from the rows' joins) and the rows of its features, FeatureRow for
 * the public or AdminFeatureRow for the owner, in the answer's order. One round trip, and a
 * text that never changes with q, limit or the voter: Postgres keeps one generic plan of it.
 */
const similarStatement = new QueryTemplate<SimilarShape, SimilarValues, SimilarRow<FeatureRow | AdminFeatureRow>>(
  (shape) => `${shape.kind}:${visibilityShapeKey(shape.settings)}:${shape.voter}:${shape.byFeature}`,
  (db, shape, param) => {
    const values: SimilarValues = {
      projectId: param("projectId"),
      text: param("text"),
      featureId: param("featureId"),
      voterId: param("voterId"),
      limit: param("limit"),
      now: param("now"),
    };
    const fromRanked = db
      .with(
        (cte) => cte("ranked").materialized(),
        () => rankingOf(db, shape, values),
      )
      .selectFrom("ranked")
      .innerJoin("features", "features.id", "ranked.id") as unknown as FeatureQuery;
    const project = { id: values.projectId, settings: shape.settings };
    const rows =
      shape.kind === "public"
        ? withFeatureColumns(db, fromRanked, project, shape.voter ? values.voterId : null, values.now)
        : adminRows(db, fromRanked, project, values.now);
    return rows
      .select(sql<string>`ranked.similarity`.as("similarity"))
      .orderBy(sql`ranked.similarity`, "desc")
      .orderBy("features.vote_count", "desc")
      .orderBy("features.id", "asc") as unknown as Compilable<SimilarRow<FeatureRow | AdminFeatureRow>>;
  },
  // Left to choose, Postgres plans this statement anew on every run (its custom-plan estimate
  // beats the generic one), and planning costs more than running it: docs/benchmarks.md,
  // "What was tried": similar features on one generic plan.
  { genericPlan: () => true },
);

/**
 * The public answer: the `limit` features visible to `voterId` (or to anybody when null) most
 * similar to `text` (1..254 characters, already trimmed), highest similarity first, then
 * vote_count, then id; only those of at least 0.3, merged duplicates never. FeatureRow (has_voted
 * for the voter) with similarity (0..1, 3 decimals). One statement.
 */
export async function findSimilarFeatureRows(
  db: Db,
  project: Project,
  text: string,
  options: { voterId: number | null; limit: number; now: Date },
): Promise<(FeatureRow & { similarity: number })[]> {
  const shape: SimilarShape = { kind: "public", settings: project.settings, voter: options.voterId !== null, byFeature: false };
  const { rows } = await similarStatement.execute(db, shape, {
    projectId: project.id,
    text,
    featureId: -1,
    voterId: options.voterId ?? 0,
    limit: options.limit,
    now: options.now,
  });
  return rows.map((row) => ({ ...(row as FeatureRow), similarity: Number(row.similarity) }));
}

/**
 * The owner's answer: the `limit` features of the project, public or not, most similar to
 * `target` (a text of 1..254 characters, or the heading of a feature, which is then left out),
 * merged duplicates never, as AdminFeatureRow with similarity, in the same order. One
 * statement; an unknown feature gives no rows (featureExists tells it from no match).
 */
export async function findSimilarAdminRows(
  db: Db,
  project: Project,
  target: { text: string } | { featureId: number },
  limit: number,
  now: Date,
): Promise<(AdminFeatureRow & { similarity: number })[]> {
  const byFeature = "featureId" in target;
  const shape: SimilarShape = { kind: "owner", settings: project.settings, voter: false, byFeature };
  const { rows } = await similarStatement.execute(db, shape, {
    projectId: project.id,
    text: byFeature ? "" : target.text,
    featureId: byFeature ? target.featureId : -1,
    voterId: 0,
    limit,
    now,
  });
  return rows.map((row) => ({ ...(row as AdminFeatureRow), similarity: Number(row.similarity) }));
}

/** Whether feature `featureId` belongs to the project. */
export async function featureExists(db: Db, projectId: number, featureId: number): Promise<boolean> {
  const row = await db
    .selectFrom("features")
    .select("id")
    .where("id", "=", featureId)
    .where("project_id", "=", projectId)
    .executeTakeFirst();
  return row !== undefined;
}
