/**
 * The owner's feature reads and writes (owner-api-v3.md, /features routes and Rules 1 and 3).
 * Reads reuse the public row (features.repository.ts withFeatureColumns) computed as if every
 * show_* setting were on, plus the owner's fields. Writes take a transaction (db | trx) and lock
 * the feature row first (FOR NO KEY UPDATE; FOR UPDATE to delete), then voters by id, then
 * voter-count shards: the order the vote statements use (votes.repository.ts).
 */
import { type ExpressionBuilder, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import { QueryTemplate } from "../../../db/query-template.ts";
import type { Database, FeaturesTable, ProjectSettings } from "../../../db/schema.ts";
import { sharedProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import { subscribeOnChange } from "../../lib/data/subscriptions.ts";
import { validationError } from "../../lib/http/errors.ts";
import { type PageRequest, pageOffset } from "../../lib/http/pagination.ts";
import { recountVoters } from "./features.counters.repository.ts";
import type { AdminFeaturePatchBody } from "./features.owner.schemas.ts";
import type { FeatureRow } from "./features.repository.ts";
import { containsPattern, type FeatureQuery, ordered, withFeatureColumns } from "./features.repository.ts";
import { everythingShown, publiclyListed, visibilityShapeKey } from "./features.visibility.ts";

type Project = { id: number; settings: ProjectSettings };

/** A FeatureRow plus the owner's fields (AdminFeatureObject). */
export interface AdminFeatureRow extends FeatureRow {
  is_public: boolean;
  position: number;
  effort: number | null;
  author_public_id: string | null;
  merged_into_id: number | null;
  merged_into_heading: string | null;
}

/** The AdminFeatureRow selection over `query` (features of `project` already filtered). */
export function adminRows(db: Db, query: FeatureQuery, project: Project, now: Date) {
  return withFeatureColumns(db, query, { id: project.id, settings: everythingShown(project.settings) }, null, now)
    .leftJoin("voters as author", "author.id", "features.author_voter_id")
    .leftJoin("feature_merges as merge", "merge.source_id", "features.id")
    .leftJoin("features as merged_target", "merged_target.id", "merge.target_id")
    .select((eb) => [
      // Listed under the project's real settings (features.visibility.ts, the public rule).
      publiclyListed(project.settings)(eb as unknown as ExpressionBuilder<Database, "features">).as("is_public"),
      "features.position",
      "features.effort",
      "author.public_id as author_public_id",
      "merge.target_id as merged_into_id",
      "merged_target.heading as merged_into_heading",
    ]);
}

/** The owner's listing filter (GET /admin/features); ids already resolved. */
export interface AdminFeatureFilter {
  statuses?: string[] | undefined;
  approved?: boolean | undefined;
  boardId?: number | undefined;
  /** A column id, or "archived" for -1. */
  column?: number | "archived" | undefined;
  tagIds?: number[] | undefined;
  q?: string | undefined;
}

function filtered(db: Db, projectId: number, filter: AdminFeatureFilter) {
  let query = db.selectFrom("features").where("features.project_id", "=", projectId);
  if (filter.statuses?.length) query = query.where("features.status", "in", filter.statuses);
  if (filter.approved !== undefined) query = query.where("features.is_approved", "=", filter.approved);
  if (filter.boardId !== undefined) query = query.where("features.board_id", "=", filter.boardId);
  if (filter.column === "archived") query = query.where("features.status", "=", "archived");
  else if (filter.column !== undefined) query = query.where("features.column_id", "=", filter.column);
  if (filter.tagIds?.length) {
    const tagIds = filter.tagIds;
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom("feature_tags")
          .select(sql<number>`1`.as("one"))
          .whereRef("feature_tags.feature_id", "=", "features.id")
          .where("feature_tags.tag_id", "in", tagIds),
      ),
    );
  }
  if (filter.q) {
    const pattern = containsPattern(filter.q);
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom("feature_search")
          .select(sql<number>`1`.as("one"))
          .whereRef("feature_search.feature_id", "=", "features.id")
          .where("feature_search.search_text", "ilike", pattern),
      ),
    );
  }
  return query;
}

/** One page of every feature of the project matching `filter` (public or not), and the total. */
export async function listAdminFeatures(
  db: Db,
  project: Project,
  filter: AdminFeatureFilter,
  options: { sort: "new" | "oldest" | "top" | "votes" | "board"; page: PageRequest; now: Date },
): Promise<{ rows: AdminFeatureRow[]; total: number }> {
  const ids = ordered(filtered(db, project.id, filter).select("features.id"), options.sort, project.settings.score_is_weighted)
    .limit(options.page.per_page)
    .offset(pageOffset(options.page));
  const fromPage = db
    .with("page", () => ids)
    .selectFrom("page")
    .innerJoin("features", "features.id", "page.id") as unknown as FeatureQuery;
  const [rows, counted] = await Promise.all([
    ordered(adminRows(db, fromPage, project, options.now), options.sort, project.settings.score_is_weighted).execute(),
    filtered(db, project.id, filter).select(sql<number>`count(*)::int`.as("total")).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows as AdminFeatureRow[], total: Number(counted.total) };
}

/**
 * The AdminFeatureRow of one feature, compiled once per visibility shape (the settings
 * publiclyListed reads for is_public): an owner edit reads it twice (before and after).
 */
const adminFeatureStatement = new QueryTemplate<ProjectSettings, { projectId: number; featureId: number; now: Date }, AdminFeatureRow>(
  visibilityShapeKey,
  (db, settings, param) => {
    const projectId = param("projectId");
    const query = db.selectFrom("features").where("features.id", "=", param("featureId")).where("features.project_id", "=", projectId);
    return adminRows(db, query, { id: projectId as number, settings }, param("now") as Date) as never;
  },
);

/** The feature `featureId` of the project whatever its visibility; undefined when missing. */
export async function findAdminFeature(db: Db, project: Project, featureId: number, now: Date): Promise<AdminFeatureRow | undefined> {
  return adminFeatureStatement.executeTakeFirst(db, project.settings, { projectId: project.id, featureId, now });
}

/** A board of the project by slug ("roadmap" also names the roadmap whatever its slug). */
export async function findBoardBySlug(db: Db, projectId: number, slug: string) {
  return db
    .selectFrom("boards")
    .select(["id", "kind"])
    .where("project_id", "=", projectId)
    .where((eb) => eb.or([eb("slug", "=", slug), ...(slug === "roadmap" ? [eb("kind", "=", "roadmap")] : [])]))
    .orderBy(sql`kind = 'roadmap'`, "desc")
    .executeTakeFirst();
}

/** Whether column `columnId` is the project's, and on board `boardId` when one is given. */
export async function columnExists(db: Db, projectId: number, columnId: number, boardId?: number): Promise<boolean> {
  let query = db.selectFrom("columns").select("id").where("id", "=", columnId).where("project_id", "=", projectId);
  if (boardId !== undefined) query = query.where("board_id", "=", boardId);
  return (await query.executeTakeFirst()) !== undefined;
}

/** Where a feature sits: board, column (null = the archived column -1) and status. */
export interface Placement {
  boardId: number;
  columnId: number | null;
  status: string;
}

/** A column of a board as placement reads it. */
export interface BoardColumn {
  id: number;
  status: string | null;
}

/** The columns of board `boardId` in board order (position, then id). */
async function boardColumns(db: Db, boardId: number): Promise<BoardColumn[]> {
  return db.selectFrom("columns").select(["id", "status"]).where("board_id", "=", boardId).orderBy("position").orderBy("id").execute();
}

/** Where the feature sits now, with its board's kind (PATCH); null for a new feature (POST). */
type CurrentPlacement = (Placement & { boardKind: "roadmap" | "custom" }) | null;

/**
 * Owner-api-v3.md Rule 1: the board, column and status a POST or PATCH leads to. On the roadmap
 * the column decides the status, and a status alone moves to the first column (by position) with
 * it; `archived` (or column_id -1) puts the feature in the archived column on any board; on a
 * custom board status and column are independent (a feature leaving the archived column there
 * without a status becomes open). Moving to another board needs `board` and `column_id` together.
 * 422 naming `board`, `column_id` or `status` otherwise.
 */
export async function resolvePlacement(
  db: Db,
  projectId: number,
  current: CurrentPlacement,
  input: { board?: string | undefined; column_id?: number | undefined; status?: string | undefined },
  currentBoardColumns?: readonly BoardColumn[],
): Promise<Placement> {
  let board: { id: number; kind: "roadmap" | "custom" };
  if (input.board !== undefined) {
    const found = await findBoardBySlug(db, projectId, input.board);
    if (!found) throw validationError("board", `no board "${input.board}" in this project`);
    board = found;
    if (current && found.id !== current.boardId && input.column_id === undefined) {
      throw validationError("column_id", "a move to another board sends board and column_id together");
    }
  } else if (current) {
    board = { id: current.boardId, kind: current.boardKind };
  } else {
    const roadmap = await findBoardBySlug(db, projectId, "roadmap");
    if (!roadmap) throw validationError("board", "this project has no roadmap");
    board = roadmap;
  }
  const columns =
    currentBoardColumns !== undefined && board.id === current?.boardId ? currentBoardColumns : await boardColumns(db, board.id);
  const roadmap = board.kind === "roadmap";
  const leavingArchive = (status: string | undefined) => status ?? (current && current.status !== "archived" ? current.status : "open");

  if (input.column_id !== undefined) {
    if (input.column_id === -1) {
      if (input.status !== undefined && input.status !== "archived")
        throw validationError("status", "column -1 is the archived column: its status is archived");
      return { boardId: board.id, columnId: null, status: "archived" };
    }
    const column = columns.find((c) => c.id === input.column_id);
    if (!column) throw validationError("column_id", `no column ${input.column_id} on this board`);
    if (input.status === "archived") throw validationError("status", "an archived feature sits in the archived column (column_id -1)");
    if (roadmap) {
      if (input.status !== undefined && input.status !== column.status) {
        throw validationError("status", `on the roadmap the column decides the status (column ${column.id} is ${column.status})`);
      }
      return { boardId: board.id, columnId: column.id, status: column.status ?? "open" };
    }
    return { boardId: board.id, columnId: column.id, status: leavingArchive(input.status) };
  }
  if (input.status === "archived") return { boardId: board.id, columnId: null, status: "archived" };
  if (input.status !== undefined && roadmap) {
    const column = columns.find((c) => c.status === input.status);
    if (!column) throw validationError("status", `the roadmap has no column with status ${input.status}`);
    return { boardId: board.id, columnId: column.id, status: input.status };
  }
  if (input.status !== undefined && current && current.boardId === board.id && current.columnId !== null) {
    return { boardId: board.id, columnId: current.columnId, status: input.status };
  }
  const first = columns[0];
  if (!first) throw validationError("column_id", "this board has no columns");
  return { boardId: board.id, columnId: first.id, status: roadmap ? (first.status ?? "open") : leavingArchive(input.status) };
}

/** The project's voter with public id `publicId` (422 author_voter_id when none). */
async function authorId(db: Db, projectId: number, publicId: string | null | undefined): Promise<number | null | undefined> {
  if (publicId === undefined || publicId === null) return publicId;
  const voter = await db
    .selectFrom("voters")
    .select("id")
    .where("project_id", "=", projectId)
    .where("public_id", "=", publicId)
    .executeTakeFirst();
  if (!voter) throw validationError("author_voter_id", `no voter ${publicId} in this project`);
  return voter.id;
}

/** Replaces the feature's tags by `tagIds` (422 tag_ids for a tag that is not the project's). */
async function setTags(db: Db, projectId: number, featureId: number, tagIds: number[]): Promise<void> {
  const unique = [...new Set(tagIds)];
  if (unique.length > 0) {
    const found = await db.selectFrom("tags").select("id").where("project_id", "=", projectId).where("id", "in", unique).execute();
    if (found.length !== unique.length) {
      const missing = unique.find((id) => !found.some((row) => row.id === id));
      throw validationError("tag_ids", `no tag ${missing} in this project`);
    }
  }
  await db.deleteFrom("feature_tags").where("feature_id", "=", featureId).execute();
  if (unique.length > 0)
    await db
      .insertInto("feature_tags")
      .values(unique.map((tag_id) => ({ feature_id: featureId, tag_id })))
      .execute();
}

type FeatureUpdate = Partial<{ [K in keyof FeaturesTable]: unknown }>;

/** The plain columns of a POST/PATCH body (placement, tags and author are resolved apart). */
function plainColumns(fields: AdminFeaturePatchBody): FeatureUpdate {
  const set: FeatureUpdate = {};
  const keys = [
    "heading",
    "description",
    "is_approved",
    "is_pinned",
    "position",
    "progress",
    "effort",
    "developer_response",
    "response_is_denial",
    "start_date",
    "target_date",
  ] as const;
  for (const key of keys) if (fields[key] !== undefined) set[key] = fields[key];
  return set;
}

/**
 * Creates a feature from a POST body (heading required; board default roadmap; is_approved
 * default true; position default after the board's last) and returns its id. A feature with
 * author_voter_id subscribes that voter (engagement-api-v3.md, "Subscriptions" rule 1: reason
 * `author`) in the caller's transaction.
 */
export async function createAdminFeature(
  db: Db,
  projectId: number,
  fields: AdminFeaturePatchBody & { heading: string },
  now: Date,
): Promise<number> {
  const placement = await resolvePlacement(db, projectId, null, fields);
  const author = await authorId(db, projectId, fields.author_voter_id);
  const row = await db
    .insertInto("features")
    .values({
      project_id: projectId,
      board_id: placement.boardId,
      column_id: placement.columnId,
      status: placement.status,
      heading: fields.heading,
      description: fields.description ?? null,
      author_voter_id: author ?? null,
      is_approved: fields.is_approved ?? true,
      is_pinned: fields.is_pinned ?? false,
      position:
        fields.position ?? sql<number>`(SELECT coalesce(max(position), -1) + 1 FROM features WHERE board_id = ${placement.boardId})`,
      progress: fields.progress ?? null,
      effort: fields.effort ?? null,
      developer_response: fields.developer_response ?? null,
      response_is_denial: fields.response_is_denial ?? false,
      linked_feature_id: null,
      start_date: fields.start_date ?? null,
      target_date: fields.target_date ?? null,
      trending_score: null,
      created_at: now,
      updated_at: now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  if (fields.tag_ids) await setTags(db, projectId, row.id, fields.tag_ids);
  if (author !== null && author !== undefined) {
    await subscribeOnChange(db, { projectId, featureId: row.id, voterId: author, reason: "author", now });
  }
  return row.id;
}

/** The columns of a LockedFeature (lockFeature). */
const LOCKED_FEATURE_COLUMNS = [
  "features.id",
  "features.board_id",
  "boards.kind as board_kind",
  "features.column_id",
  "features.status",
  "features.linked_feature_id",
] as const;

/** Locks the project's feature row (FOR NO KEY UPDATE) and returns where it sits; undefined when missing. */
export async function lockFeature(db: Db, projectId: number, featureId: number) {
  return db
    .selectFrom("features")
    .innerJoin("boards", "boards.id", "features.board_id")
    .select([...LOCKED_FEATURE_COLUMNS])
    .where("features.id", "=", featureId)
    .where("features.project_id", "=", projectId)
    .forNoKeyUpdate("features")
    .executeTakeFirst();
}

/** Where a locked feature sits (lockFeature). */
export interface LockedFeature {
  id: number;
  board_id: number;
  board_kind: "roadmap" | "custom";
  column_id: number | null;
  status: string;
  linked_feature_id: number | null;
}

/**
 * What an owner edit's first statement returns (lockFeatureForEdit): the feature as it was
 * before the edit (AdminFeatureRow), where it sits, the columns of its board in board order, and
 * `fresh`: false when the row was changed by a transaction that committed while this statement
 * waited for its lock, so that the rows it joined (tags, release, merge) may be older than the
 * locked row, and the caller must read the feature again.
 */
export interface FeatureLockedForEdit extends AdminFeatureRow {
  linked_feature_id: number | null;
  board_columns: BoardColumn[];
  fresh: boolean;
}

/**
 * The first statement of an owner edit's transaction (withProjectWriteLock with
 * `firstStatementLocks`), one round trip: takes the project's write lock in shared mode
 * (sharedProjectWriteLock, evaluated before the row lock), locks the feature row (FOR NO KEY
 * UPDATE) and reads the AdminFeatureRow with its board's columns. A statement reads its joined
 * rows as of its start; the locked row, when a committed change replaced it while the statement
 * waited, as of that change (READ COMMITTED's recheck). `fresh` compares the locked version with
 * the one the statement's snapshot holds (same xmin: nobody changed it since the statement began).
 * It and the rest of its transaction run with the lock bound as statement bound (QueryTemplate
 * `lockBound`): a 57014 or 55P03 once it has waited that long in all.
 */
const lockForEditStatement = new QueryTemplate<ProjectSettings, { projectId: number; featureId: number; now: Date }, FeatureLockedForEdit>(
  visibilityShapeKey,
  (db, settings, param) => {
    const projectId = param("projectId");
    const query = db
      .selectFrom("features")
      .where(sharedProjectWriteLock(projectId))
      .where("features.id", "=", param("featureId"))
      .where("features.project_id", "=", projectId);
    return adminRows(db, query, { id: projectId, settings }, param("now"))
      .select([
        "features.linked_feature_id",
        sql<boolean>`features.xmin = (SELECT f.xmin FROM features f WHERE f.id = features.id)`.as("fresh"),
        sql<
          BoardColumn[]
        >`(SELECT coalesce(json_agg(json_build_object('id', c.id, 'status', c.status) ORDER BY c.position, c.id), '[]'::json)
        FROM columns c WHERE c.board_id = features.board_id)`.as("board_columns"),
      ])
      .forNoKeyUpdate("features") as never;
  },
  // Bounded as a whole by the lock bound: queued behind another waiter for a frozen holder's
  // row, it would otherwise wait twice (docs/operations.md, "Database time limits").
  { lockBound: true },
);

/**
 * lockFeature for an owner edit, as the first statement of its transaction: also takes the
 * project's write lock and reads the feature as it is before the edit (FeatureLockedForEdit).
 * Undefined when the feature is not the project's (nothing is sent then).
 */
export async function lockFeatureForEdit(
  db: Db,
  project: Project,
  featureId: number,
  now: Date,
): Promise<FeatureLockedForEdit | undefined> {
  return lockForEditStatement.executeTakeFirst(db, project.settings, { projectId: project.id, featureId, now });
}

/**
 * The UPDATE of an owner edit with the AdminFeatureRow after it, in one statement: the row the
 * UPDATE returns takes the place of the features table in the owner read (adminRows over the
 * CTE "updated" named features), the joined rows are those the transaction sees (tags set
 * earlier in it included). Compiled once per visibility shape and set of columns.
 */
const updateAndReadStatement = new QueryTemplate<
  { settings: ProjectSettings; columns: readonly string[] },
  Record<string, unknown>,
  AdminFeatureRow
>(
  ({ settings, columns }) => `${visibilityShapeKey(settings)}|${columns.join(",")}`,
  (db, { settings, columns }, param) => {
    const set = Object.fromEntries(columns.map((column) => [column, param(`set:${column}`)]));
    const projectId = param("projectId");
    const query = db
      .with("updated", (q) =>
        q
          .updateTable("features")
          .set(set as never)
          .where("id", "=", param("featureId") as number)
          .returningAll(),
      )
      .selectFrom("updated as features") as unknown as FeatureQuery;
    return adminRows(db, query, { id: projectId as number, settings }, param("now") as Date) as never;
  },
);

/**
 * Applies a PATCH body (partial: absent keys unchanged, null clears) to `current`, the feature
 * locked by the caller (lockFeatureForEdit), and returns the AdminFeatureRow after it (read by
 * the UPDATE's own statement); undefined when the body is empty (nothing written). 422 as
 * resolvePlacement, authorId and setTags.
 */
export async function updateAdminFeature(
  db: Db,
  project: Project,
  current: FeatureLockedForEdit,
  fields: AdminFeaturePatchBody,
  now: Date,
): Promise<AdminFeatureRow | undefined> {
  const featureId = current.id;
  const set = plainColumns(fields);
  if (fields.board !== undefined || fields.column_id !== undefined || fields.status !== undefined) {
    const placement = await resolvePlacement(
      db,
      project.id,
      { boardId: current.board_id, boardKind: current.board_kind, columnId: current.column_id, status: current.status },
      fields,
      current.board_columns,
    );
    Object.assign(set, { board_id: placement.boardId, column_id: placement.columnId, status: placement.status });
  }
  if (fields.author_voter_id !== undefined) set.author_voter_id = await authorId(db, project.id, fields.author_voter_id);
  if (fields.tag_ids !== undefined) await setTags(db, project.id, featureId, fields.tag_ids);
  if (Object.keys(fields).length > 0) set.updated_at = now;
  const columns = Object.keys(set).sort();
  if (columns.length === 0) return undefined;
  const values: Record<string, unknown> = { projectId: project.id, featureId, now };
  for (const column of columns) values[`set:${column}`] = set[column as keyof FeatureUpdate] ?? null;
  const after = await updateAndReadStatement.executeTakeFirst(db, { settings: project.settings, columns }, values);
  if (!after) throw new Error("the locked feature could not be updated");
  return after;
}

/**
 * Rule 3: deletes the feature with its votes, comments (likes go with them), tags, release links
 * and merge records, and moves every counter that counted them: voters' vote_count and the
 * project's voter count (recountVoters). Features marked duplicates of it lose the link. The
 * feature and those linking to it are locked first, in id order. false when missing.
 */
export async function deleteAdminFeature(db: Db, projectId: number, featureId: number): Promise<boolean> {
  const locked = await db
    .selectFrom("features")
    .select("id")
    .where("project_id", "=", projectId)
    .where((eb) => eb.or([eb("id", "=", featureId), eb("linked_feature_id", "=", featureId)]))
    .orderBy("id")
    .forUpdate()
    .execute();
  if (!locked.some((row) => row.id === featureId)) return false;
  const votes = await db.deleteFrom("votes").where("feature_id", "=", featureId).returning("voter_id").execute();
  await db.deleteFrom("comments").where("feature_id", "=", featureId).execute();
  await db.deleteFrom("features").where("id", "=", featureId).execute();
  await recountVoters(
    db,
    projectId,
    votes.map((vote) => vote.voter_id),
  );
  return true;
}
