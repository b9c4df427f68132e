/**
 * Feature reads (contract, "Reading a board"): the page of a listing in one query with every
 * ref resolved (board, column, tags, release, duplicate, has_voted), one count query for
 * meta.total, and the same row shape for a single feature. Visibility comes from
 * features.visibility.ts only; counters are the stored ones (never counted per row).
 */
import { type SelectQueryBuilder, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import { QueryTemplate } from "../../../db/query-template.ts";
import type { Database, ProjectSettings } from "../../../db/schema.ts";
import { pageOffset, type PageRequest } from "../../lib/pagination.ts";
import type { FeatureRow } from "./features.mapper.ts";
import type { FeatureSort } from "./features.schemas.ts";
import { publiclyListed, visibleTo } from "./features.visibility.ts";

type Project = { id: number; settings: ProjectSettings };
type FeatureQuery = SelectQueryBuilder<Database, "features", {}>;

/** Which features a listing matches; every list is also limited to publicly listed ones. */
export interface FeatureListFilter {
  /** Board row id, or null for scope=project (every board). */
  boardId: number | null;
  /** A column id of that board, "archived" for column -1, or null for every column. */
  column: number | "archived" | null;
  tagIds?: number[] | undefined;
  statuses?: string[] | undefined;
  /** Free text; matched case-insensitively as a substring of heading and description. */
  q?: string | undefined;
}

/** `text` as a LIKE pattern matching it literally anywhere (\, % and _ escaped). */
export function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

function listed(db: Db, project: Project, filter: FeatureListFilter): FeatureQuery {
  let query = db
    .selectFrom("features")
    .where("features.project_id", "=", project.id)
    .where(publiclyListed(project.settings));
  if (filter.boardId !== null) query = query.where("features.board_id", "=", filter.boardId);
  if (filter.column === "archived") query = query.where("features.status", "=", "archived");
  else if (filter.column !== null) query = query.where("features.column_id", "=", filter.column);
  if (filter.statuses && filter.statuses.length > 0) query = query.where("features.status", "in", filter.statuses);
  if (filter.tagIds && filter.tagIds.length > 0) {
    const tagIds = filter.tagIds;
    query = query.where(({ exists, selectFrom }) =>
      exists(
        selectFrom("feature_tags")
          .select(sql<number>`1`.as("one"))
          .whereRef("feature_tags.feature_id", "=", "features.id")
          .where("feature_tags.tag_id", "in", tagIds),
      ),
    );
  }
  // search_text is lower(heading || ' ' || description); ILIKE on it is served by the trigram
  // index of feature_search (kept apart from features so that votes do not rewrite it).
  if (filter.q !== undefined && filter.q !== "") {
    const pattern = containsPattern(filter.q);
    query = query.where((eb) => eb.exists(eb.selectFrom("feature_search")
      .select(sql<number>`1`.as("one"))
      .whereRef("feature_search.feature_id", "=", "features.id")
      .where("feature_search.search_text", "ilike", pattern)));
  }
  return query;
}

/** Adds the joins and the selection of a FeatureRow to a query over `features`. */
function withFeatureColumns(db: Db, query: FeatureQuery, project: Project, voterId: number | null, now: Date) {
  // A duplicate link is only shown while its target is itself public.
  const linked = db
    .selectFrom("features")
    .select(["features.id", "features.heading"])
    .where("features.project_id", "=", project.id)
    .where(publiclyListed(project.settings))
    .as("linked");
  return query
    .innerJoin("boards", "boards.id", "features.board_id")
    .leftJoin("columns", "columns.id", "features.column_id")
    .leftJoin(linked, "linked.id", "features.linked_feature_id")
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom("release_features")
          .innerJoin("releases", "releases.id", "release_features.release_id")
          .select(["releases.id as release_id", "releases.name as release_name", "release_features.changelog_type"])
          .whereRef("release_features.feature_id", "=", "features.id")
          .where("releases.published_at", "is not", null)
          .where("releases.published_at", "<=", now)
          .orderBy("releases.published_at", "desc")
          .orderBy("releases.id", "desc")
          .limit(1)
          .as("rel"),
      (join) => join.onTrue(),
    )
    .select((eb) => [
      "features.id", "features.heading", "features.description", "features.status",
      "boards.id as board_id", "boards.kind as board_kind", "boards.name as board_name", "boards.slug as board_slug",
      "features.column_id", "columns.name as column_name", "columns.color as column_color",
      "rel.release_id", "rel.release_name", "rel.changelog_type",
      "features.comment_count", "features.vote_count", "features.weighted_score", "features.view_count",
      "features.progress", "features.is_approved", "features.is_pinned", "features.developer_response",
      "features.response_is_denial", "linked.id as linked_id", "linked.heading as linked_heading",
      "features.start_date", "features.target_date", "features.created_at", "features.updated_at",
      voterId === null
        ? sql<boolean>`false`.as("has_voted")
        : eb
            .exists(
              eb.selectFrom("votes")
                .select(sql<number>`1`.as("one"))
                .whereRef("votes.feature_id", "=", "features.id")
                .where("votes.voter_id", "=", voterId),
            )
            .as("has_voted"),
      // Byte-order collation so PGlite and a Postgres server sort names alike (as the board does).
      sql<unknown>`coalesce((
        SELECT json_agg(json_build_object('id', t.id, 'name', t.name)
          ORDER BY lower(t.name) COLLATE "C", t.name COLLATE "C", t.id)
        FROM feature_tags ft JOIN tags t ON t.id = ft.tag_id
        WHERE ft.feature_id = ${sql.ref("features.id")}), '[]'::json)`.as("tags"),
    ]);
}

/** ORDER BY of a sort (contract, features query `sort`): pinned first, ties broken by id. */
function ordered<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>, sort: FeatureSort, weighted: boolean) {
  const by = (column: string) => sql.ref(`features.${column}`);
  const pinned = query.orderBy(by("is_pinned"), "desc");
  switch (sort) {
    case "board":
      return pinned.orderBy(by("position"), "asc").orderBy(by("id"), "asc");
    case "top":
      return pinned.orderBy(by(weighted ? "weighted_score" : "vote_count"), "desc").orderBy(by("id"), "desc");
    case "votes":
      return pinned.orderBy(by("vote_count"), "desc").orderBy(by("id"), "desc");
    case "trending":
      return pinned.orderBy(by("trending_score"), (o) => o.desc().nullsLast()).orderBy(by("id"), "desc");
    case "new":
      return pinned.orderBy(by("created_at"), "desc").orderBy(by("id"), "desc");
    case "oldest":
      return pinned.orderBy(by("created_at"), "asc").orderBy(by("id"), "asc");
    case "comments":
      return pinned.orderBy(by("comment_count"), "desc").orderBy(by("id"), "desc");
  }
}

/**
 * One page of the public listing and the number of matches across all pages, in one round
 * trip: the page's ids are picked first (an index walk in sort order, see the hot-path-indexes
 * migration), only those rows get their refs resolved (before, every matching row was joined and
 * then sorted), and the count rides along as an uncorrelated subquery. `knownTotal` (a total the caller cached) skips the count; an empty
 * page asks for the count separately. `now` bounds which releases count as published.
 */
export async function listFeatures(
  db: Db,
  project: Project,
  filter: FeatureListFilter,
  options: { sort: FeatureSort; page: PageRequest; voterId: number | null; now: Date; knownTotal?: number | undefined },
): Promise<{ rows: FeatureRow[]; total: number }> {
  const weighted = project.settings.score_is_weighted;
  const pageIds = ordered(listed(db, project, filter).select("features.id"), options.sort, weighted)
    .limit(options.page.per_page)
    .offset(pageOffset(options.page));
  const countQuery = listed(db, project, filter).select(sql<number>`count(*)::int`.as("total"));
  // A materialized CTE keeps the page a separate, cheap plan: as a join or IN subquery the
  // planner weighs every features index for it again, which cost more than running the query.
  const fromPage = db
    .with((cte) => cte("page").materialized(), () => pageIds)
    .selectFrom("page")
    .innerJoin("features", "features.id", "page.id") as unknown as FeatureQuery;
  const pageQuery = withFeatureColumns(db, fromPage, project, options.voterId, options.now);
  const rows = await ordered(
    options.knownTotal === undefined ? pageQuery.select(countQuery.as("total")) : pageQuery,
    options.sort,
    weighted,
  ).execute();
  if (rows.length === 0) {
    return { rows: [], total: options.knownTotal ?? Number((await countQuery.executeTakeFirstOrThrow()).total) };
  }
  const total = options.knownTotal ?? Number((rows[0] as { total?: number }).total);
  return { rows: rows as FeatureRow[], total };
}

/**
 * The feature `featureId` if `voterId` may see it (publicly listed, or their own suggestion
 * awaiting review); undefined when missing, of another project or hidden.
 */
export async function findFeature(
  db: Db,
  project: Project,
  featureId: number,
  options: { voterId: number | null; now: Date },
): Promise<FeatureRow | undefined> {
  const query = db
    .selectFrom("features")
    .where("features.id", "=", featureId)
    .where("features.project_id", "=", project.id)
    .where(visibleTo(project.settings, options.voterId));
  const row = await withFeatureColumns(db, query, project, options.voterId, options.now).executeTakeFirst();
  return row as FeatureRow | undefined;
}

/** Compiled once: one statement text (and one prepared statement) whatever the page size. */
const votedFeatureIds = new QueryTemplate<null, { voterId: number; featureIds: readonly number[] }, { feature_id: number }>(
  () => "",
  (db, _shape, param) =>
    db
      .selectFrom("votes")
      .select("feature_id")
      .where("voter_id", "=", param("voterId"))
      .where("feature_id", "=", sql<number>`any(${param("featureIds")}::int[])`),
);

/** Which of `featureIds` the voter `voterId` has a vote on (the has_voted of a page). */
export async function findVotedFeatureIds(db: Db, voterId: number, featureIds: readonly number[]): Promise<Set<number>> {
  if (featureIds.length === 0) return new Set();
  const { rows } = await votedFeatureIds.execute(db, null, { voterId, featureIds });
  return new Set(rows.map((row) => row.feature_id));
}
