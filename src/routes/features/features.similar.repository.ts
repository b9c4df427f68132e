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
 * Two passes keep the common case cheap: the near-duplicates are looked up by exact keys
 * (btree on the heading and on the lexeme key, GIN on the typo keys); when they fill the
 * answer, nothing scoring less can enter it (a partial match never exceeds 0.8). Otherwise a
 * second pass scores every feature the indexes can match at all: heading trigrams (GIN `%`,
 * pg_trgm's default threshold 0.3, H's) and shared lexemes of heading or description (GIN `&&`).
 */
import { type ExpressionBuilder, type RawBuilder, type SqlBool, sql } from "kysely";
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

/** q as the index compares it: normalized text, lexemes and their key, typo keys. */
interface SimilarityInput {
  norm: string;
  words: string[];
  key: string;
  typoKeys: number[];
}

/** Who is searching: the public (a voter or nobody) or the owner, and what to leave out. */
export type SimilarityScope = { kind: "public"; voterId: number | null } | { kind: "owner"; excludeId: number | null };

/** One ranked feature: id, similarity rounded to 3 decimals. */
export interface RankedFeature {
  id: number;
  similarity: number;
}

async function inputOf(db: Db, text: string): Promise<SimilarityInput> {
  const row = await sql<{ norm: string; words: string[]; typo_keys: number[] | null }>`
    SELECT n.norm, feature_similarity_words(${text}) AS words, feature_similarity_typo_keys(n.norm) AS typo_keys
    FROM (SELECT feature_similarity_norm(${text}) AS norm) AS n`
    .execute(db)
    .then((result) => result.rows[0]!);
  const words = row.words ?? [];
  return { norm: row.norm, words, key: words.join(" "), typoKeys: row.typo_keys ?? [] };
}

/** How many of q's lexemes the lexeme array `column` holds: one containment test per word. */
function sharedWords(column: string, words: string[]) {
  return sql<number>`(${sql.join(
    words.map((word) => sql`(${sql.ref(column)} @> ARRAY[${word}]::text[])::int`),
    sql` + `,
  )})`;
}

/**
 * The components of the score of a row of feature_similarity joined with its features row, for
 * `input`, each computed once (a LATERAL subquery kept apart by OFFSET 0, or the planner would
 * inline and repeat them): ts heading trigram similarity, near (a near-duplicate key matches),
 * hw heading lexemes' Jaccard index, dw share of q's lexemes in the description.
 */
interface Components {
  ts: number;
  near: boolean;
  hw: number;
  dw: number;
}

function componentsOf(input: SimilarityInput): RawBuilder<Components> {
  const { norm, words, key, typoKeys } = input;
  const ts = sql<number>`similarity(feature_similarity.heading_norm, ${norm})`;
  // levenshtein counts a transposition as two edits; an adjacent swap is one typo.
  const oneTypo = sql<boolean>`(feature_similarity.typo_keys && ${typoKeys}::int[] AND length(feature_similarity.heading_norm) <= 255 AND CASE
      WHEN levenshtein(feature_similarity.heading_norm, ${norm}) <= 1 THEN true
      WHEN length(feature_similarity.heading_norm) = length(${norm}) AND levenshtein(feature_similarity.heading_norm, ${norm}) = 2 THEN EXISTS (
        SELECT 1 FROM generate_series(1, length(${norm}) - 1) AS i
        WHERE overlay(${norm} placing substr(${norm}, i + 1, 1) || substr(${norm}, i, 1) from i for 2) = feature_similarity.heading_norm)
      ELSE false END)`;
  const near = sql<boolean>`((${key} <> '' AND feature_similarity.word_key = ${key}) OR ${oneTypo})`;
  if (words.length === 0) {
    return sql<Components>`(SELECT ${ts} AS ts, ${near} AS near, 0::float8 AS hw, 0::float8 AS dw OFFSET 0)`;
  }
  const headingShared = sharedWords("feature_similarity.heading_words", words);
  return sql<Components>`(SELECT ${ts} AS ts, ${near} AS near,
      -- Jaccard index: shared / (|heading's| + |q's| - shared).
      ${headingShared}::float8 / (cardinality(feature_similarity.heading_words) + ${words.length} - ${headingShared}) AS hw,
      ${sharedWords("feature_similarity.description_words", words)}::float8 / ${words.length} AS dw
    OFFSET 0)`;
}

/** The score from componentsOf (alias c), unrounded. */
function scoreOf(input: SimilarityInput) {
  const heading = sql<number>`greatest(CASE WHEN c.ts >= 0.3 THEN c.ts ELSE 0 END, c.hw)`;
  const description = sql<number>`c.dw`;
  // A one-typo match must also share a trigram: two one-letter headings share none.
  return sql<number>`CASE
    WHEN feature_similarity.heading_norm = ${input.norm} THEN 1.0
    WHEN c.near AND c.ts > 0 THEN ${NEAR_DUPLICATE_MIN} + 0.1 * c.ts
    ELSE 0.8 * (1 - (1 - ${heading}) * (1 - ${description} / 2)) END`;
}

/**
 * The ids of the project's features the indexes match for `input`: the near-duplicate keys
 * only, or (`everything`) also heading trigrams (`%`) and shared lexemes of heading or
 * description, one index-backed branch each. Visibility is applied when they are scored.
 */
function candidates(db: Db, projectId: number, input: SimilarityInput, everything: boolean) {
  const matching = (condition: RawBuilder<SqlBool>) =>
    db.selectFrom("feature_similarity").select("feature_id").where("project_id", "=", projectId).where(condition);
  const near = [sql`heading_norm = ${input.norm}`];
  if (input.key !== "") near.push(sql`word_key = ${input.key}`);
  if (input.typoKeys.length > 0) near.push(sql`typo_keys && ${input.typoKeys}::int[]`);
  let query = matching(sql<SqlBool>`(${sql.join(near, sql` OR `)})`);
  if (everything) query = query.union(matching(sql<SqlBool>`heading_norm % ${input.norm}`));
  if (everything && input.words.length > 0) {
    query = query
      .union(matching(sql<SqlBool>`heading_words && ${input.words}::text[]`))
      .union(matching(sql<SqlBool>`description_words && ${input.words}::text[]`));
  }
  return query;
}

/**
 * The `limit` best of the candidates (ids, or the candidates query itself: thousands of ids are
 * cheaper joined in Postgres than carried to the server and back) that `scope` may see, scored for `input`, of at least the threshold. */
async function rank(
  db: Db,
  project: Project,
  scope: SimilarityScope,
  input: SimilarityInput,
  ids: number[] | ReturnType<typeof candidates>,
  limit: number,
): Promise<RankedFeature[]> {
  if (Array.isArray(ids) && ids.length === 0) return [];
  let scored = db
    .selectFrom("features")
    .innerJoin("feature_similarity", "feature_similarity.feature_id", "features.id")
    .innerJoinLateral(componentsOf(input).as("c"), (join) => join.onTrue())
    // On both sides, so that each is read through its primary key rather than scanned whole.
    .where((eb) =>
      Array.isArray(ids)
        ? eb.and([
            eb("features.id", "=", sql<number>`any(${ids}::int[])`),
            eb("feature_similarity.feature_id", "=", sql<number>`any(${ids}::int[])`),
          ])
        : eb("features.id", "in", ids),
    )
    .where("features.project_id", "=", project.id)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom("feature_merges").select("feature_merges.id").whereRef("feature_merges.source_id", "=", "features.id"))),
    );
  if (scope.kind === "public") {
    scored = scored.where((eb) => visibleTo(project.settings, scope.voterId)(eb as unknown as ExpressionBuilder<Database, "features">));
  } else if (scope.excludeId !== null) {
    scored = scored.where("features.id", "<>", scope.excludeId);
  }
  const inner = scored
    .select(["features.id", "features.vote_count", sql<number>`round((${scoreOf(input)})::numeric, 3)`.as("similarity")])
    .as("scored");
  const rows = await db
    .selectFrom(inner)
    .select(["scored.id", "scored.similarity"])
    .where("scored.similarity", ">=", sql<number>`${SIMILARITY_THRESHOLD}::numeric`)
    .orderBy("scored.similarity", "desc")
    .orderBy("scored.vote_count", "desc")
    .orderBy("scored.id", "asc")
    .limit(limit)
    .execute();
  return rows.map((row) => ({ id: row.id, similarity: Number(row.similarity) }));
}

/**
 * The `limit` features most similar to `text` (1..254 characters, already trimmed) that `scope`
 * may see, highest similarity first, then vote_count, then id; only those of at least 0.3;
 * merged duplicates never. Returns ids with their similarity (0..1, 3 decimals).
 */
export async function rankSimilarFeatures(
  db: Db,
  project: Project,
  text: string,
  scope: SimilarityScope,
  limit: number,
): Promise<RankedFeature[]> {
  const input = await inputOf(db, text);
  if (input.norm === "" && input.words.length === 0) return [];
  const nearIds = (await candidates(db, project.id, input, false).execute()).map((row) => row.feature_id);
  const near = await rank(db, project, scope, input, nearIds, limit);
  // Every partial match scores below NEAR_DUPLICATE_MIN: a full page of near-duplicates is final.
  if (near.length === limit && near.every((feature) => feature.similarity >= NEAR_DUPLICATE_MIN)) return near;
  return rank(db, project, scope, input, candidates(db, project.id, input, true), limit);
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
