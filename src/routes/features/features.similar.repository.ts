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
 *   index of the lexemes, and D, the description's, is the larger of the share of q's lexemes
 *   it contains and its trigram word similarity with q (counted from 0.6).
 * A feature sharing no lexeme and no trigram with q scores 0. Listed: a score of at least 0.3.
 *
 * Two passes keep the common case cheap: the near-duplicates are looked up by exact keys
 * (btree on the heading and on the lexeme key, GIN on the typo keys); when they fill the
 * answer, nothing scoring less can enter it (a partial match never exceeds 0.8). Otherwise a
 * second pass scores every feature the indexes can match at all: heading trigrams (GIN `%`, the
 * 0.3 default threshold), shared lexemes of heading or description (GIN `&&`), and description
 * trigrams (feature_search's GIN, `<%`, the 0.6 default word threshold).
 */
import { type Expression, type ExpressionBuilder, type SqlBool, sql } from "kysely";
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

/** The score of the joined row `s` (feature_similarity) and `features` for `input`, unrounded. */
function scoreOf(input: SimilarityInput) {
  const { norm, words, key, typoKeys } = input;
  const wordCount = words.length;
  const trigram = sql<number>`similarity(feature_similarity.heading_norm, ${norm})`;
  const shared = (column: string) =>
    sql<number>`cardinality(ARRAY(SELECT unnest(${sql.ref(column)}) INTERSECT SELECT unnest(${words}::text[])))`;
  // levenshtein counts a transposition as two edits; an adjacent swap is one typo.
  const oneTypo = sql<boolean>`(feature_similarity.typo_keys && ${typoKeys}::int[] AND ${trigram} > 0 AND length(feature_similarity.heading_norm) <= 255 AND CASE
      WHEN levenshtein(feature_similarity.heading_norm, ${norm}) <= 1 THEN true
      WHEN length(feature_similarity.heading_norm) = length(${norm}) AND levenshtein(feature_similarity.heading_norm, ${norm}) = 2 THEN EXISTS (
        SELECT 1 FROM generate_series(1, length(${norm}) - 1) AS i
        WHERE overlay(${norm} placing substr(${norm}, i + 1, 1) || substr(${norm}, i, 1) from i for 2) = feature_similarity.heading_norm)
      ELSE false END)`;
  const headingWords =
    wordCount === 0
      ? sql<number>`0`
      : sql<number>`(${shared("feature_similarity.heading_words")}::float8 / nullif(cardinality(ARRAY(SELECT unnest(feature_similarity.heading_words) UNION SELECT unnest(${words}::text[]))), 0))`;
  const descriptionWords =
    wordCount === 0 ? sql<number>`0` : sql<number>`(${shared("feature_similarity.description_words")}::float8 / ${wordCount})`;
  const descriptionTrigrams = sql<number>`word_similarity(${norm}, lower(coalesce(features.description, '')))`;
  const heading = sql<number>`greatest(CASE WHEN ${trigram} >= 0.3 THEN ${trigram} ELSE 0 END, coalesce(${headingWords}, 0))`;
  const description = sql<number>`greatest(${descriptionWords}, CASE WHEN ${descriptionTrigrams} >= 0.6 THEN ${descriptionTrigrams} ELSE 0 END)`;
  return sql<number>`CASE
    WHEN feature_similarity.heading_norm = ${norm} THEN 1.0
    WHEN (${key} <> '' AND feature_similarity.word_key = ${key}) OR ${oneTypo} THEN ${NEAR_DUPLICATE_MIN} + 0.1 * ${trigram}
    ELSE 0.8 * (1 - (1 - ${heading}) * (1 - ${description} / 2)) END`;
}

type Scope = ExpressionBuilder<Database, "features" | "feature_similarity">;

/** The near-duplicate lookups (exact keys only). */
function nearDuplicate(input: SimilarityInput) {
  return (eb: Scope): Expression<SqlBool> => {
    const conditions: Expression<SqlBool>[] = [eb("feature_similarity.heading_norm", "=", input.norm)];
    if (input.key !== "") conditions.push(eb("feature_similarity.word_key", "=", input.key));
    if (input.typoKeys.length > 0) conditions.push(sql<SqlBool>`feature_similarity.typo_keys && ${input.typoKeys}::int[]`);
    return eb.or(conditions);
  };
}

/** Every feature any component can score above 0 (see the module comment). */
function anyMatch(input: SimilarityInput) {
  return (eb: Scope): Expression<SqlBool> => {
    const conditions: Expression<SqlBool>[] = [
      nearDuplicate(input)(eb),
      sql<SqlBool>`feature_similarity.heading_norm % ${input.norm}`,
      eb(
        "feature_similarity.feature_id",
        "in",
        eb
          .selectFrom("feature_search")
          .select("feature_search.feature_id")
          .where(sql<SqlBool>`${input.norm} <% feature_search.search_text`),
      ),
    ];
    if (input.words.length > 0) {
      conditions.push(sql<SqlBool>`feature_similarity.heading_words && ${input.words}::text[]`);
      conditions.push(sql<SqlBool>`feature_similarity.description_words && ${input.words}::text[]`);
    }
    return eb.or(conditions);
  };
}

async function rank(
  db: Db,
  project: Project,
  scope: SimilarityScope,
  input: SimilarityInput,
  candidates: (eb: Scope) => Expression<SqlBool>,
  limit: number,
): Promise<RankedFeature[]> {
  let scored = db
    .selectFrom("feature_similarity")
    .innerJoin("features", "features.id", "feature_similarity.feature_id")
    .where("feature_similarity.project_id", "=", project.id)
    .where("features.project_id", "=", project.id)
    .where(candidates)
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
  const near = await rank(db, project, scope, input, nearDuplicate(input), limit);
  // Every partial match scores below NEAR_DUPLICATE_MIN: a full page of near-duplicates is final.
  if (near.length === limit && near.every((feature) => feature.similarity >= NEAR_DUPLICATE_MIN)) return near;
  return rank(db, project, scope, input, anyMatch(input), limit);
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
