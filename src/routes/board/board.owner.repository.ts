/**
 * Board and column writes of the owner routes (owner-api-v3.md, Routes /boards, /columns; Rules
 * 1 and 3). Every function takes a `db | trx`; handlers run each request in one transaction.
 * The API's board id 0 is the roadmap, which is a row of its own here (kind "roadmap").
 */

import type { Selectable, Updateable } from "kysely";
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { BoardsTable, ColumnsTable } from "../../../db/schema.ts";

export type BoardRow = Selectable<BoardsTable>;
export type ColumnRow = Selectable<ColumnsTable>;

/** The board the API calls `apiId` (0: the roadmap) in the project, or undefined. */
export async function findBoard(db: Db, projectId: number, apiId: number): Promise<BoardRow | undefined> {
  let query = db.selectFrom("boards").selectAll().where("project_id", "=", projectId);
  query = apiId === 0 ? query.where("kind", "=", "roadmap") : query.where("id", "=", apiId).where("kind", "=", "custom");
  return query.executeTakeFirst();
}

/** Id of a board of the project whose slug is `slug` (other than `exceptId`), or undefined. */
export async function findBoardBySlug(db: Db, projectId: number, slug: string, exceptId?: number): Promise<number | undefined> {
  let query = db.selectFrom("boards").select("id").where("project_id", "=", projectId).where("slug", "=", slug);
  if (exceptId !== undefined) query = query.where("id", "<>", exceptId);
  return (await query.executeTakeFirst())?.id;
}

/** Inserts a custom board after the last one (position max + 1). */
export async function insertCustomBoard(db: Db, projectId: number, values: { name: string; slug: string }): Promise<number> {
  const row = await db
    .insertInto("boards")
    .values((eb) => ({
      project_id: projectId,
      kind: "custom" as const,
      name: values.name,
      slug: values.slug,
      position: eb.selectFrom("boards").select(sql<number>`coalesce(max(position) + 1, 0)`.as("p")).where("project_id", "=", projectId),
    }))
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function updateBoard(db: Db, boardId: number, values: Updateable<BoardsTable>): Promise<void> {
  if (Object.keys(values).length === 0) return;
  await db.updateTable("boards").set(values).where("id", "=", boardId).execute();
}

/** Number of features filed on the board (any column, the archived one included). */
export async function countBoardFeatures(db: Db, boardId: number): Promise<number> {
  const row = await db
    .selectFrom("features")
    .select(sql<number>`count(*)::int`.as("n"))
    .where("board_id", "=", boardId)
    .executeTakeFirstOrThrow();
  return row.n;
}

/** Deletes the board; its (empty) columns go with it (ON DELETE CASCADE). */
export async function deleteBoard(db: Db, boardId: number): Promise<void> {
  await db.deleteFrom("boards").where("id", "=", boardId).execute();
}

/** The board's columns in drawing order. */
export async function listColumns(db: Db, boardId: number): Promise<ColumnRow[]> {
  return db.selectFrom("columns").selectAll().where("board_id", "=", boardId).orderBy("position").orderBy("id").execute();
}

/** The column `id` of the project with its board's kind, or undefined. */
export async function findColumn(
  db: Db,
  projectId: number,
  id: number,
): Promise<(ColumnRow & { board_kind: "roadmap" | "custom" }) | undefined> {
  return db
    .selectFrom("columns")
    .innerJoin("boards", "boards.id", "columns.board_id")
    .selectAll("columns")
    .select("boards.kind as board_kind")
    .where("columns.id", "=", id)
    .where("columns.project_id", "=", projectId)
    .executeTakeFirst();
}

/** Inserts a column; without a position it goes after the board's last column. */
export async function insertColumn(
  db: Db,
  values: {
    project_id: number;
    board_id: number;
    name: string;
    color: string | null;
    position?: number;
    is_votable: boolean;
    status: string | null;
  },
): Promise<number> {
  const { position, ...rest } = values;
  const row = await db
    .insertInto("columns")
    .values((eb) => ({
      ...rest,
      position:
        position ??
        eb.selectFrom("columns").select(sql<number>`coalesce(max(position) + 1, 0)`.as("p")).where("board_id", "=", values.board_id),
    }))
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function updateColumn(db: Db, columnId: number, values: Updateable<ColumnsTable>): Promise<void> {
  if (Object.keys(values).length === 0) return;
  await db.updateTable("columns").set(values).where("id", "=", columnId).execute();
}

/**
 * Gives every feature in the roadmap column `columnId` the column's new status (Rule 1: on the
 * roadmap the column decides the status). Counters do not depend on status: none change.
 */
export async function setColumnFeaturesStatus(db: Db, columnId: number, status: string): Promise<void> {
  await db.updateTable("features").set({ status, updated_at: sql`now()` }).where("column_id", "=", columnId).execute();
}

/** Number of features in the column. */
export async function countColumnFeatures(db: Db, columnId: number): Promise<number> {
  const row = await db
    .selectFrom("features")
    .select(sql<number>`count(*)::int`.as("n"))
    .where("column_id", "=", columnId)
    .executeTakeFirstOrThrow();
  return row.n;
}

export async function deleteColumn(db: Db, columnId: number): Promise<void> {
  await db.deleteFrom("columns").where("id", "=", columnId).execute();
}
