/**
 * Feature reads (contract, "Reading a board"): the page of a listing in one statement with every
 * ref resolved (board, column, tags, release, duplicate, has_voted) and meta.total counted in it
 * unless the caller knows it, as rows (listFeatures) or as the JSON text of its FeatureObjects
 * written by Postgres (listFeaturePage, features.json.ts: what the listing route sends), and the
 * same row shape for a single feature. Visibility comes from features.visibility.ts only;
 * counters are the stored ones (never counted per row). Hot statements are compiled once per
 * shape (db/query-template.ts).
 */
import { type Compilable, type SelectQueryBuilder, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import { type ParamOf, QueryTemplate } from "../../../db/query-template.ts";
import type { Database, ProjectSettings, ReleaseFeaturesTable } from "../../../db/schema.ts";
import { type PageRequest, pageOffset } from "../../lib/http/pagination.ts";
import { featureObjectJson } from "./features.json.ts";
import type { FeatureSort } from "./features.schemas.ts";
import { publiclyListed, visibilityShapeKey, visibleTo } from "./features.visibility.ts";

type Project = { id: number; settings: ProjectSettings };
// biome-ignore lint/complexity/noBannedTypes: kysely's type of a query that selects nothing yet
export type FeatureQuery = SelectQueryBuilder<Database, "features", {}>;

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

/**
 * The structure of a listing's WHERE clause: which filters it has, not their values (the
 * QueryTemplate shape of the list statement).
 */
interface ListedShape {
  board: boolean;
  column: "any" | "archived" | "one";
  statuses: boolean;
  tags: boolean;
  search: boolean;
}

/** The values of a listing's filters (real values, or QueryTemplate parameters). */
interface ListedValues {
  projectId: number;
  boardId: number;
  columnId: number;
  statuses: readonly string[];
  tagIds: readonly number[];
  /** containsPattern(q) */
  pattern: string;
}

function listedShapeOf(filter: FeatureListFilter): ListedShape {
  return {
    board: filter.boardId !== null,
    column: filter.column === null ? "any" : filter.column === "archived" ? "archived" : "one",
    statuses: (filter.statuses?.length ?? 0) > 0,
    tags: (filter.tagIds?.length ?? 0) > 0,
    search: filter.q !== undefined && filter.q !== "",
  };
}

function listedValuesOf(projectId: number, filter: FeatureListFilter): ListedValues {
  return {
    projectId,
    // Unused by a shape without the filter, but every value is bound: 0 / [] / "" stand for none.
    boardId: filter.boardId ?? 0,
    columnId: typeof filter.column === "number" ? filter.column : 0,
    statuses: filter.statuses ?? [],
    tagIds: filter.tagIds ?? [],
    pattern: filter.q ? containsPattern(filter.q) : "",
  };
}

function listed(db: Db, settings: ProjectSettings, shape: ListedShape, values: ListedValues): FeatureQuery {
  let query = db.selectFrom("features").where("features.project_id", "=", values.projectId).where(publiclyListed(settings));
  if (shape.board) query = query.where("features.board_id", "=", values.boardId);
  if (shape.column === "archived") query = query.where("features.status", "=", "archived");
  else if (shape.column === "one") query = query.where("features.column_id", "=", values.columnId);
  if (shape.statuses) query = query.where("features.status", "=", sql<string>`any(${values.statuses}::text[])`);
  if (shape.tags) {
    query = query.where(({ exists, selectFrom }) =>
      exists(
        selectFrom("feature_tags")
          .select(sql<number>`1`.as("one"))
          .whereRef("feature_tags.feature_id", "=", "features.id")
          .where("feature_tags.tag_id", "=", sql<number>`any(${values.tagIds}::int[])`),
      ),
    );
  }
  // search_text is lower(heading || ' ' || description); ILIKE on it is served by the trigram
  // index of feature_search (kept apart from features so that votes do not rewrite it).
  if (shape.search) {
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom("feature_search")
          .select(sql<number>`1`.as("one"))
          .whereRef("feature_search.feature_id", "=", "features.id")
          .where("feature_search.search_text", "ilike", values.pattern),
      ),
    );
  }
  return query;
}

/** One feature as features.repository.ts selects it (every join already resolved). */
export interface FeatureRow {
  id: number;
  heading: string;
  description: string | null;
  status: string;
  board_id: number;
  board_kind: "roadmap" | "custom";
  board_name: string;
  board_slug: string;
  /** null for an archived feature (and one whose column was deleted). */
  column_id: number | null;
  column_name: string | null;
  column_color: string | null;
  release_id: number | null;
  release_name: string | null;
  changelog_type: ReleaseFeaturesTable["changelog_type"] | null;
  comment_count: number;
  vote_count: number;
  weighted_score: number;
  /** The order key of sort=trending (src/lib/rules/trending.ts); null without votes. Not shown. */
  trending_score: number | null;
  view_count: number;
  progress: number | null;
  has_voted: boolean;
  is_approved: boolean;
  is_pinned: boolean;
  developer_response: string | null;
  response_is_denial: boolean;
  linked_id: number | null;
  linked_heading: string | null;
  /** json_agg of {id, name}; drivers hand json back parsed or as text. */
  tags: unknown;
  start_date: Date | string | null;
  target_date: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/**
 * Adds the joins and the selection of a FeatureRow to a query over `features`; the owner's
 * routes add their fields to it (features.owner.repository.ts). `withoutTags` leaves `tags`
 * out (listJsonStatement looks them up inside each object it writes).
 */
export function withFeatureColumns(
  db: Db,
  query: FeatureQuery,
  project: Project,
  voterId: number | null,
  now: Date,
  options: { withoutTags?: boolean } = {},
) {
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
      "features.id",
      "features.heading",
      "features.description",
      "features.status",
      "boards.id as board_id",
      "boards.kind as board_kind",
      "boards.name as board_name",
      "boards.slug as board_slug",
      "features.column_id",
      "columns.name as column_name",
      "columns.color as column_color",
      "rel.release_id",
      "rel.release_name",
      "rel.changelog_type",
      "features.comment_count",
      "features.vote_count",
      "features.weighted_score",
      "features.trending_score",
      "features.view_count",
      "features.progress",
      "features.is_approved",
      "features.is_pinned",
      "features.developer_response",
      "features.response_is_denial",
      "linked.id as linked_id",
      "linked.heading as linked_heading",
      "features.start_date",
      "features.target_date",
      "features.created_at",
      "features.updated_at",
      voterId === null
        ? sql<boolean>`false`.as("has_voted")
        : eb
            .exists(
              eb
                .selectFrom("votes")
                .select(sql<number>`1`.as("one"))
                .whereRef("votes.feature_id", "=", "features.id")
                .where("votes.voter_id", "=", voterId),
            )
            .as("has_voted"),
      // Byte-order collation so PGlite and a Postgres server sort names alike (as the board does).
      ...(options.withoutTags
        ? []
        : [
            sql<unknown>`coalesce((
        SELECT json_agg(json_build_object('id', t.id, 'name', t.name)
          ORDER BY lower(t.name) COLLATE "C", t.name COLLATE "C", t.id)
        FROM feature_tags ft JOIN tags t ON t.id = ft.tag_id
        WHERE ft.feature_id = ${sql.ref("features.id")}), '[]'::json)`.as("tags"),
          ]),
    ]);
}

/** ORDER BY of a sort (contract, features query `sort`): pinned first, ties broken by id. */
export function ordered<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>, sort: FeatureSort, weighted: boolean) {
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

/** What makes two listings different statements (see db/query-template.ts). */
interface ListShape extends ListedShape {
  sort: FeatureSort;
  settings: ProjectSettings;
  /** has_voted is computed for a voter (else false). */
  voter: boolean;
  /** The total is counted in the same statement (no knownTotal). */
  count: boolean;
  /**
   * On page 1, LIMIT as a literal (a bucket of FIRST_PAGE_LIMITS) and no OFFSET, so that one
   * generic plan serves every run (a generic plan with LIMIT and OFFSET as parameters assumes
   * the OFFSET skips a tenth of the rows). Measured on the large project: 1.1-1.3 ms per page
   * instead of 2.7-3.7 ms. Later pages keep parameters, so the number of statements stays
   * bounded. null on later pages.
   */
  firstPageLimit: number | null;
}

/**
 * The shapes run with a generic plan (db/query-template.ts): a first page whose total is known.
 * Postgres's own choice re-planned them on every run (its estimate for `project_id = $1 AND
 * board_id = $2` makes the generic plan look dearer than it is); scripts/bench/plan-modes.ts,
 * sort=top and new of the roadmap, Postgres CPU per run, its choice / generic: small 2.4 /
 * 0.53 ms, large 2.0-2.5 / 0.47-0.80 ms. With the count in the statement a generic plan is
 * cheaper on the small project (0.95 against 2.55 ms) but dearer on the large one (39 against
 * 31 ms), so those shapes, run once per cached total, keep Postgres's choice; so do later pages.
 */
function listedWithGenericPlan(shape: ListShape): boolean {
  return shape.firstPageLimit !== null && !shape.count;
}

/** LIMIT buckets of a first page: the smallest that holds per_page is fetched, then trimmed. */
const FIRST_PAGE_LIMITS = [20, 50, 100];

interface ListValues extends ListedValues {
  voterId: number;
  now: Date;
  limit: number;
  offset: number;
}

/** A listing's per-call values as parameters of its statement template. */
function listParams(param: ParamOf<ListValues>): ListValues {
  return {
    projectId: param("projectId"),
    boardId: param("boardId"),
    columnId: param("columnId"),
    statuses: param("statuses"),
    tagIds: param("tagIds"),
    pattern: param("pattern"),
    voterId: param("voterId"),
    now: param("now"),
    limit: param("limit"),
    offset: param("offset"),
  };
}

/**
 * One page of a listing's matches (`matching`: the ids in the sort's order, with any columns the
 * statement keeps, e.g. a row number) picked in the materialized CTE `page` and joined back to
 * features: LIMIT and OFFSET as parameters, or on a first page the literal LIMIT bucket
 * (ListShape.firstPageLimit). Materialized, the page stays a separate, cheap plan: as a join or
 * IN subquery the planner weighs every features index for it again, which cost more than
 * running the query.
 */
function joinedPage<O extends { id: number }>(
  db: Db,
  shape: ListShape,
  values: ListValues,
  matching: SelectQueryBuilder<Database, "features", O>,
): FeatureQuery {
  const pageIds =
    shape.firstPageLimit === null ? matching.limit(values.limit).offset(values.offset) : matching.limit(sql.lit(shape.firstPageLimit));
  return db
    .with(
      (cte) => cte("page").materialized(),
      () => pageIds,
    )
    .selectFrom("page")
    .innerJoin("features", "features.id", "page.id") as unknown as FeatureQuery;
}

/**
 * The page statement of a listing: the page's ids are picked first (an index walk in sort
 * order, see the hot-path-indexes migration), only those rows get their refs resolved, and
 * the count rides along as an uncorrelated subquery unless the caller knows the total.
 */
const listStatement = new QueryTemplate<ListShape, ListValues, FeatureRow & { total?: number }>(
  // Every field of the shape, with the settings reduced to the ones the statement reads.
  (shape) => JSON.stringify({ ...shape, settings: [shape.settings.score_is_weighted, visibilityShapeKey(shape.settings)] }),
  (db, shape, param) => {
    const { settings } = shape;
    const weighted = settings.score_is_weighted;
    const values = listParams(param);
    const fromPage = joinedPage(
      db,
      shape,
      values,
      ordered(listed(db, settings, shape, values).select("features.id"), shape.sort, weighted),
    );
    const project = { id: values.projectId, settings };
    const pageQuery = withFeatureColumns(db, fromPage, project, shape.voter ? values.voterId : null, values.now);
    const counted = shape.count
      ? pageQuery.select(listed(db, settings, shape, values).select(sql<number>`count(*)::int`.as("total")).as("total"))
      : pageQuery;
    return ordered(counted, shape.sort, weighted) as unknown as Compilable<FeatureRow & { total?: number }>;
  },
  { genericPlan: listedWithGenericPlan },
);

/**
 * One page of the public listing as rows and the number of matches across all pages, in one
 * round trip (listStatement, compiled once per shape): the rows listFeaturePage writes as JSON
 * (test/features.json.test.ts holds the two equal). `knownTotal` (a total the caller cached)
 * skips the count; an empty page asks for the count separately. `now` bounds which releases
 * count as published.
 */
export async function listFeatures(
  db: Db,
  project: Project,
  filter: FeatureListFilter,
  options: { sort: FeatureSort; page: PageRequest; voterId: number | null; now: Date; knownTotal?: number | undefined },
): Promise<{ rows: FeatureRow[]; total: number }> {
  const listedShape = listedShapeOf(filter);
  const listedValues = listedValuesOf(project.id, filter);
  const shape: ListShape = {
    ...listedShape,
    sort: options.sort,
    settings: project.settings,
    voter: options.voterId !== null,
    count: options.knownTotal === undefined,
    firstPageLimit: options.page.page === 1 ? (FIRST_PAGE_LIMITS.find((limit) => limit >= options.page.per_page) ?? null) : null,
  };
  const { rows } = await listStatement.execute(db, shape, {
    ...listedValues,
    voterId: options.voterId ?? 0,
    now: options.now,
    limit: options.page.per_page,
    offset: pageOffset(options.page),
  });
  if (rows.length === 0) {
    const counted =
      options.knownTotal ??
      (
        await listed(db, project.settings, listedShape, listedValues)
          .select(sql<number>`count(*)::int`.as("total"))
          .executeTakeFirstOrThrow()
      ).total;
    return { rows: [], total: Number(counted) };
  }
  const total = options.knownTotal ?? Number(rows[0]!.total);
  return { rows: rows.length > options.page.per_page ? rows.slice(0, options.page.per_page) : rows, total };
}

/** The ORDER BY list of `ordered` as SQL, for a window numbering a page in the same order. */
function orderKeys(sort: FeatureSort, weighted: boolean) {
  const by = (column: string) => sql.ref(`features.${column}`);
  const pinned = sql`${by("is_pinned")} DESC`;
  switch (sort) {
    case "board":
      return sql`${pinned}, ${by("position")} ASC, ${by("id")} ASC`;
    case "top":
      return sql`${pinned}, ${by(weighted ? "weighted_score" : "vote_count")} DESC, ${by("id")} DESC`;
    case "votes":
      return sql`${pinned}, ${by("vote_count")} DESC, ${by("id")} DESC`;
    case "trending":
      return sql`${pinned}, ${by("trending_score")} DESC NULLS LAST, ${by("id")} DESC`;
    case "new":
      return sql`${pinned}, ${by("created_at")} DESC, ${by("id")} DESC`;
    case "oldest":
      return sql`${pinned}, ${by("created_at")} ASC, ${by("id")} ASC`;
    case "comments":
      return sql`${pinned}, ${by("comment_count")} DESC, ${by("id")} DESC`;
  }
}

/** One page of a listing as the JSON text of its `data` (listFeaturePage). */
export interface FeaturePageJson {
  /** `[FeatureObject,...]` as JSON.stringify(rows.map(toFeatureObject)) would write it. */
  data: string;
  /** The FeatureObjects Postgres wrote for this page (every listed one not passed as `kept`), by id. */
  written: Map<number, string>;
  /** The ids listed, in order. */
  ids: number[];
  /** The order keys of the page's last item (null when the page is empty). */
  last: { id: number; vote_count: number; weighted_score: number; trending_score: number | null } | null;
  total: number;
}

interface PageJsonRow {
  /** The page's FeatureObjects in order, joined by OBJECT_SEPARATOR, each kept one as "". */
  data: string;
  ids: number[];
  last_id: number | null;
  last_vote_count: number | null;
  last_weighted_score: number | null;
  last_trending_score: number | null;
  total: number | null;
}

/**
 * The project settings a FeatureObject's JSON text depends on (features.json.ts: the score's
 * field, which counters show, and the visibility rules that decide whether a duplicate link
 * shows), as a string: texts written under the same one are alike.
 */
export function featureObjectShape(settings: ProjectSettings): string {
  const shown = [settings.show_comments, settings.show_votes, settings.show_views, settings.show_progress];
  return JSON.stringify([settings.score_is_weighted, visibilityShapeKey(settings), shown]);
}

/**
 * Separates the FeatureObjects in PageJsonRow.data: a control character, which JSON text never
 * holds unescaped (to_json writes it as \u001e).
 */
const OBJECT_SEPARATOR = "\x1e";

/**
 * listStatement with the page's FeatureObjects written by Postgres (features.json.ts): one row
 * holding the objects' texts, the ids and the last item's order keys (what the shared read
 * cache records, read-dependencies.ts), and the total unless the caller knows it (counted even
 * when the page is empty, so that case costs no second statement). The objects of the ids in
 * `known` (the caller holds them, features.object-cache.ts) are left empty, so Postgres neither
 * writes nor sends them. The page keeps its order by a row number in the sort's order; `keep`
 * (offset + per_page) trims a first page's LIMIT bucket. Also keyed by the show_* settings,
 * which decide which counters the text carries.
 */
interface PageJsonShape extends ListShape {
  /**
   * Whether the statement writes the objects not in `known`. Without them it only lists ids:
   * the object's expression, set up on every run even when no row needs it, is then not in the
   * statement at all (0.19 against 0.26 ms of Postgres CPU on the large project's first page).
   */
  objects: boolean;
}

const listJsonStatement = new QueryTemplate<PageJsonShape, ListValues & { keep: number; known: readonly number[] }, PageJsonRow>(
  (shape) => JSON.stringify({ ...shape, settings: featureObjectShape(shape.settings) }),
  (db, shape, param) => {
    const { settings } = shape;
    const weighted = settings.score_is_weighted;
    const values = listParams(param);
    const numbered = listed(db, settings, shape, values).select([
      "features.id",
      sql<number>`row_number() OVER (ORDER BY ${orderKeys(shape.sort, weighted)})`.as("ord"),
    ]);
    const fromPage = joinedPage(db, shape, values, ordered(numbered, shape.sort, weighted));
    const project = { id: values.projectId, settings };
    const rows = withFeatureColumns(db, fromPage, project, shape.voter ? values.voterId : null, values.now, {
      withoutTags: true,
    }).select(sql<number>`${sql.ref("page.ord")}`.as("ord"));
    const keep = param("keep");
    const kept = sql`FILTER (WHERE r.ord <= ${keep})`;
    const lastOf = (column: string) => sql`(array_agg(${sql.ref(`r.${column}`)} ORDER BY r.ord DESC) ${kept})[1]`;
    const object = shape.objects
      ? sql<string>`CASE WHEN r.id = any(${param("known")}::int[]) THEN '' ELSE ${featureObjectJson("r", settings)} END`
      : sql<string>`''`;
    return db
      .selectFrom(rows.as("r"))
      .select([
        sql<string>`coalesce(string_agg(${object}, ${sql.lit(OBJECT_SEPARATOR)} ORDER BY r.ord) ${kept}, '')`.as("data"),
        sql<number[]>`coalesce(array_agg(r.id ORDER BY r.ord) ${kept}, '{}')`.as("ids"),
        lastOf("id").as("last_id"),
        lastOf("vote_count").as("last_vote_count"),
        lastOf("weighted_score").as("last_weighted_score"),
        lastOf("trending_score").as("last_trending_score"),
        shape.count
          ? listed(db, settings, shape, values).select(sql<number>`count(*)::int`.as("total")).as("total")
          : sql<number | null>`NULL::int`.as("total"),
      ]) as never;
  },
  { genericPlan: listedWithGenericPlan },
);

/**
 * One page of the public listing as JSON text (listJsonStatement) and the number of matches
 * across all pages, in one round trip. `knownTotal` (a total the caller cached) skips the count.
 * `now` bounds which releases count as published. `kept` holds FeatureObjects the caller
 * already has as text, by id, current for this read (features.object-cache.ts): those listed
 * are taken from it instead of written again. With `keptAll` (the caller expects every listed
 * object among them) the statement lists ids only, and runs again with the objects in the rare
 * case that it lists one not kept.
 */
export async function listFeaturePage(
  db: Db,
  project: Project,
  filter: FeatureListFilter,
  options: {
    sort: FeatureSort;
    page: PageRequest;
    voterId: number | null;
    now: Date;
    knownTotal?: number | undefined;
    kept?: ReadonlyMap<number, string> | undefined;
    keptAll?: boolean | undefined;
  },
): Promise<FeaturePageJson> {
  const shape: ListShape = {
    ...listedShapeOf(filter),
    sort: options.sort,
    settings: project.settings,
    voter: options.voterId !== null,
    count: options.knownTotal === undefined,
    firstPageLimit: options.page.page === 1 ? (FIRST_PAGE_LIMITS.find((limit) => limit >= options.page.per_page) ?? null) : null,
  };
  const offset = pageOffset(options.page);
  const kept = options.kept ?? new Map<number, string>();
  const run = async (objects: boolean) =>
    (
      await listJsonStatement.execute(
        db,
        { ...shape, objects },
        {
          ...listedValuesOf(project.id, filter),
          voterId: options.voterId ?? 0,
          now: options.now,
          limit: options.page.per_page,
          offset,
          keep: offset + options.page.per_page,
          known: [...kept.keys()],
        },
      )
    ).rows[0]!;
  const keptAll = options.keptAll === true && kept.size > 0;
  let row = await run(!keptAll);
  if (keptAll && row.ids.some((id) => !kept.has(Number(id)))) row = await run(true);
  const ids = row.ids.map(Number);
  const objects = ids.length === 0 ? [] : row.data.split(OBJECT_SEPARATOR);
  const written = new Map<number, string>();
  for (const [i, id] of ids.entries()) {
    if (objects[i] === "") objects[i] = kept.get(id)!;
    else written.set(id, objects[i]!);
  }
  const last =
    row.last_id === null
      ? null
      : {
          id: Number(row.last_id),
          vote_count: Number(row.last_vote_count),
          weighted_score: Number(row.last_weighted_score),
          trending_score: row.last_trending_score === null ? null : Number(row.last_trending_score),
        };
  return { data: `[${objects.join(",")}]`, written, ids, last, total: options.knownTotal ?? Number(row.total) };
}

/**
 * The statement of findFeature, compiled once per shape (the visibility settings, and whether
 * a voter reads: their own suggestions and has_voted) instead of built by kysely on each
 * feature-detail miss.
 */
const featureStatement = new QueryTemplate<
  { settings: ProjectSettings; voter: boolean },
  { projectId: number; featureId: number; voterId: number; now: Date },
  FeatureRow
>(
  (shape) => `${visibilityShapeKey(shape.settings)},voter:${shape.voter}`,
  (db, shape, param) => {
    const projectId = param("projectId");
    const voterId = shape.voter ? param("voterId") : null;
    const query = db
      .selectFrom("features")
      .where("features.id", "=", param("featureId"))
      .where("features.project_id", "=", projectId)
      .where(visibleTo(shape.settings, voterId));
    return withFeatureColumns(db, query, { id: projectId, settings: shape.settings }, voterId, param("now")) as never;
  },
);

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
  return featureStatement.executeTakeFirst(
    db,
    { settings: project.settings, voter: options.voterId !== null },
    { projectId: project.id, featureId, voterId: options.voterId ?? 0, now: options.now },
  );
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
