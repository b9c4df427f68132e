/** Queries behind the board document (contract, "Reading a board", BoardDocument). */
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import { QueryTemplate } from "../../../db/query-template.ts";
import type { BoardColumnRow } from "../../lib/data/app-caches.ts";

/**
 * Every board of the project with its columns, one row per column (a board without columns
 * yields one row with null column fields), in drawing order: roadmap first, then custom boards
 * by position then id; columns by position then id. One query.
 */
export async function listBoardColumns(db: Db, projectId: number): Promise<BoardColumnRow[]> {
  return db
    .selectFrom("boards")
    .leftJoin("columns", "columns.board_id", "boards.id")
    .select([
      "boards.id as board_id",
      "boards.kind as board_kind",
      "boards.name as board_name",
      "boards.slug as board_slug",
      "boards.position as board_position",
      "columns.id as column_id",
      "columns.name as column_name",
      "columns.color as column_color",
      "columns.position as column_position",
      "columns.is_votable as column_is_votable",
      "columns.status as column_status",
    ])
    .where("boards.project_id", "=", projectId)
    .orderBy((eb) => eb.case().when("boards.kind", "=", "roadmap").then(0).else(1).end())
    .orderBy("boards.position")
    .orderBy("boards.id")
    .orderBy("columns.position")
    .orderBy("columns.id")
    .execute();
}

/**
 * Every tag of the project, by name then id. Case-insensitive byte order ("C" collation) so the
 * order does not depend on the server's locale (PGlite and a Postgres server differ there).
 */
export async function listTags(db: Db, projectId: number): Promise<{ id: number; name: string }[]> {
  return db
    .selectFrom("tags")
    .select(["id", "name"])
    .where("project_id", "=", projectId)
    .orderBy(sql`lower(name) COLLATE "C"`)
    .orderBy(sql`name COLLATE "C"`)
    .orderBy("id")
    .execute();
}

/**
 * The project's voter count (voters with at least one vote): the sum of its shard rows in
 * project_voter_counts (at most VOTER_COUNT_SHARDS, one primary-key range), read fresh: the
 * request's cached project context predates votes cast since the key was resolved.
 */
export async function readVoterCount(db: Db, projectId: number): Promise<number> {
  const row = await voterCountStatement.executeTakeFirst(db, null, { projectId });
  return Number(row?.voter_count ?? 0);
}

/** readVoterCount's statement, compiled once: it runs on every board-document build. */
const voterCountStatement = new QueryTemplate<null, { projectId: number }, { voter_count: number | string }>(
  () => "",
  (db, _shape, param) =>
    db
      .selectFrom("project_voter_counts")
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>("voter_count"), eb.lit(0)).as("voter_count"))
      .where("project_id", "=", param("projectId")) as never,
);
