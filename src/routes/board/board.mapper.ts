/**
 * Board rows -> the owner routes' BoardEntry and Column (owner-api-v3.md, Routes /boards,
 * /columns). Unlike the public document (board.handlers.ts toBoardEntries) the owner sees every
 * stored column, the column's own is_votable flag (not folded with allow_voting) and no
 * archived column, which is not a row.
 */

import type { Column } from "../../contract/schemas.ts";
import type { BoardRow, ColumnRow } from "./board.owner.repository.ts";
import type { BoardEntry } from "./board.schemas.ts";

export function toOwnerColumn(row: ColumnRow, boardKind: "roadmap" | "custom"): Column {
  return {
    id: row.id,
    name: row.name,
    color: row.color,
    position: row.position,
    is_votable: row.is_votable,
    status: boardKind === "roadmap" ? row.status : null,
  };
}

export function toOwnerBoardEntry(board: BoardRow, columns: ColumnRow[]): BoardEntry {
  return {
    id: board.kind === "roadmap" ? 0 : board.id,
    kind: board.kind,
    name: board.name,
    slug: board.slug,
    columns: columns.map((column) => toOwnerColumn(column, board.kind)),
  };
}
