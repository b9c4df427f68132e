/**
 * Handlers of the owner board and column routes: one transaction per write, uniqueness under the
 * project's "boards" advisory lock (owner-api-v3.md, Routes /boards, /columns; Rules 1 and 3).
 */
import type { Db } from "../../../db/connect.ts";
import { lockProjectScope } from "../../lib/data/owner-locks.ts";
import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import { success } from "../../lib/http/envelope.ts";
import { ApiError, notFound, validationError } from "../../lib/http/errors.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { toOwnerBoardEntry, toOwnerColumn } from "./board.mapper.ts";
import {
  type BoardRow,
  countBoardFeatures,
  countColumnFeatures,
  deleteBoard,
  deleteColumn,
  findBoard,
  findBoardBySlug,
  findColumn,
  insertColumn,
  insertCustomBoard,
  listColumns,
  setColumnFeaturesStatus,
  updateBoard,
  updateColumn,
} from "./board.owner.repository.ts";
import type * as routes from "./board.owner.routes.ts";

/** 409 already_exists when another board of the project has `slug`; "roadmap" always names the roadmap. */
async function assertSlugFree(trx: Db, projectId: number, slug: string, exceptId?: number): Promise<void> {
  if (slug === "roadmap") throw new ApiError("already_exists", `the slug "roadmap" is reserved for the roadmap`);
  const taken = await findBoardBySlug(trx, projectId, slug, exceptId);
  if (taken !== undefined) throw new ApiError("already_exists", `a board with slug "${slug}" already exists`);
}

async function boardOr404(trx: Db, projectId: number, apiId: number): Promise<BoardRow> {
  const board = await findBoard(trx, projectId, apiId);
  if (!board) throw notFound("board");
  return board;
}

async function entryOf(trx: Db, board: BoardRow) {
  return toOwnerBoardEntry(board, await listColumns(trx, board.id));
}

export const adminCreateBoard: AppRouteHandler<typeof routes.adminCreateBoard> = async (c) => {
  const values = c.req.valid("json");
  const projectId = c.get("project").id;
  const entry = await withProjectWriteLock(c.get("deps").db, c.get("project").id, async (trx) => {
    await lockProjectScope(trx, "boards", projectId);
    await assertSlugFree(trx, projectId, values.slug);
    const id = await insertCustomBoard(trx, projectId, values);
    return entryOf(trx, await boardOr404(trx, projectId, id));
  });
  return c.json(success(entry), 201);
};

export const adminUpdateBoard: AppRouteHandler<typeof routes.adminUpdateBoard> = async (c) => {
  const { board_id } = c.req.valid("param");
  const patch = c.req.valid("json");
  const projectId = c.get("project").id;
  if (board_id === 0) {
    for (const field of ["slug", "position"] as const) {
      if (patch[field] !== undefined) throw validationError(field, `${field}: the roadmap (board 0) takes name only`);
    }
  }
  const entry = await withProjectWriteLock(c.get("deps").db, c.get("project").id, async (trx) => {
    await lockProjectScope(trx, "boards", projectId);
    const board = await boardOr404(trx, projectId, board_id);
    if (patch.slug !== undefined) await assertSlugFree(trx, projectId, patch.slug, board.id);
    await updateBoard(trx, board.id, patch);
    return entryOf(trx, await boardOr404(trx, projectId, board_id));
  });
  return c.json(success(entry), 200);
};

export const adminDeleteBoard: AppRouteHandler<typeof routes.adminDeleteBoard> = async (c) => {
  const { board_id } = c.req.valid("param");
  const projectId = c.get("project").id;
  if (board_id === 0) throw new ApiError("in_use", "the roadmap cannot be deleted: every project has one");
  await withProjectWriteLock(c.get("deps").db, c.get("project").id, async (trx) => {
    await lockProjectScope(trx, "boards", projectId);
    const board = await boardOr404(trx, projectId, board_id);
    const features = await countBoardFeatures(trx, board.id);
    if (features > 0) throw new ApiError("in_use", `the board holds ${features} feature(s); move or delete them first`);
    await deleteBoard(trx, board.id);
  });
  return c.json(success({ deleted: true as const, id: board_id }), 200);
};

export const adminCreateColumn: AppRouteHandler<typeof routes.adminCreateColumn> = async (c) => {
  const { board_id } = c.req.valid("param");
  const values = c.req.valid("json");
  const projectId = c.get("project").id;
  const column = await withProjectWriteLock(c.get("deps").db, c.get("project").id, async (trx) => {
    await lockProjectScope(trx, "boards", projectId);
    const board = await boardOr404(trx, projectId, board_id);
    if (board.kind === "roadmap" && values.status === undefined) throw validationError("status", "status: required on a roadmap column");
    if (board.kind === "custom" && values.status !== undefined)
      throw validationError("status", "status: a custom board's column has no status");
    const id = await insertColumn(trx, {
      project_id: projectId,
      board_id: board.id,
      name: values.name,
      color: values.color,
      position: values.position,
      is_votable: values.is_votable,
      status: values.status ?? null,
    });
    return toOwnerColumn((await findColumn(trx, projectId, id))!, board.kind);
  });
  return c.json(success(column), 201);
};

export const adminUpdateColumn: AppRouteHandler<typeof routes.adminUpdateColumn> = async (c) => {
  const { column_id } = c.req.valid("param");
  const patch = c.req.valid("json");
  const projectId = c.get("project").id;
  const column = await withProjectWriteLock(c.get("deps").db, c.get("project").id, async (trx) => {
    await lockProjectScope(trx, "boards", projectId);
    const current = await findColumn(trx, projectId, column_id);
    if (!current) throw notFound("column");
    if (current.board_kind === "custom" && patch.status !== undefined) {
      throw validationError("status", "status: a custom board's column has no status");
    }
    await updateColumn(trx, column_id, patch);
    if (patch.status !== undefined && patch.status !== current.status) await setColumnFeaturesStatus(trx, column_id, patch.status);
    return toOwnerColumn((await findColumn(trx, projectId, column_id))!, current.board_kind);
  });
  return c.json(success(column), 200);
};

export const adminDeleteColumn: AppRouteHandler<typeof routes.adminDeleteColumn> = async (c) => {
  const { column_id } = c.req.valid("param");
  const projectId = c.get("project").id;
  await withProjectWriteLock(c.get("deps").db, c.get("project").id, async (trx) => {
    await lockProjectScope(trx, "boards", projectId);
    if (!(await findColumn(trx, projectId, column_id))) throw notFound("column");
    const features = await countColumnFeatures(trx, column_id);
    if (features > 0) throw new ApiError("in_use", `the column holds ${features} feature(s); move or delete them first`);
    await deleteColumn(trx, column_id);
  });
  return c.json(success({ deleted: true as const, id: column_id }), 200);
};
