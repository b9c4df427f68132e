/**
 * Resolves the board and column a listing names (contract, features query `board` and
 * `column`) to row ids, so the handler can answer 422 for a slug or column the project's
 * document does not show.
 */
import type { Db } from "../../../db/connect.ts";
import type { ListTarget } from "../../lib/data/app-caches.ts";

/**
 * The board with slug `boardSlug` (null or "roadmap": the project's roadmap, whatever its
 * slug) and, when `columnId` is given, that column if it belongs to the board. undefined when
 * the project has no such board. One query.
 */
export async function findListTarget(
  db: Db,
  projectId: number,
  boardSlug: string | null,
  columnId: number | null,
): Promise<ListTarget | undefined> {
  const row = await db
    .selectFrom("boards")
    .leftJoin("columns", (join) => join.onRef("columns.board_id", "=", "boards.id").on("columns.id", "=", columnId ?? -1))
    .select(["boards.id as board_id", "columns.id as column_id", "columns.status as column_status"])
    .where("boards.project_id", "=", projectId)
    .where((eb) => (boardSlug === null || boardSlug === "roadmap" ? eb("boards.kind", "=", "roadmap") : eb("boards.slug", "=", boardSlug)))
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    boardId: row.board_id,
    column: row.column_id === null ? null : { id: row.column_id, status: row.column_status },
  };
}
