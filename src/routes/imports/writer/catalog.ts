/**
 * Source boards and tags (imports-v3.md, "Mapping", Features and Tags). Tags are reused by name
 * (case-insensitive) or created. With `boards: roadmap` a source board becomes a tag of its name
 * (remembered under the tag source id `board:<id>`); with `boards: custom` a custom board of the
 * same name (reused by name, or created with one column "Ideas").
 */
import { sql } from "kysely";
import { insertColumn, insertCustomBoard } from "../../board/index.ts";
import { findTagByName, insertTag } from "../../tags/index.ts";
import type { ImportBoard, ImportTag } from "../import-data.ts";
import { existingIds, type WriteContext } from "./context.ts";

/** The tag source id a roadmap import gives the tag made of a source board. */
export const boardTagId = (boardSourceId: string) => `board:${boardSourceId}`;

/** A custom board where features of a source board go: its id and first column. */
export interface CustomBoard {
  id: number;
  firstColumnId: number;
}

/** Tags by source id -> tag id; tombstoned ones (deleted since) are skipped with a warning. */
export async function writeTags(ctx: WriteContext, tags: { sourceId: string; name: string; path: string }[]): Promise<Map<string, number>> {
  const result = new Map<string, number>();
  const alive = await existingIds(
    ctx.trx,
    "tags",
    ctx.projectId,
    tags.flatMap((t) => {
      const m = ctx.mapped.tag.get(t.sourceId);
      return m ? [m.target] : [];
    }),
  );
  for (const tag of tags) {
    ctx.tick();
    if (result.has(tag.sourceId)) continue;
    const m = ctx.mapped.tag.get(tag.sourceId);
    if (m) {
      if (alive.has(m.target)) {
        result.set(tag.sourceId, m.target);
        ctx.counts.tags.updated += 1;
      } else {
        ctx.counts.tags.skipped += 1;
        ctx.warn(tag.path, "the tag an earlier import made was deleted since; not re-created");
      }
      continue;
    }
    const name = tag.name.trim().slice(0, 100);
    if (name === "") {
      ctx.counts.tags.skipped += 1;
      ctx.warn(tag.path, "a tag without a name is skipped");
      continue;
    }
    const found = await findTagByName(ctx.trx, ctx.projectId, name);
    const id = found ?? (await insertTag(ctx.trx, ctx.projectId, name));
    if (found === undefined) ctx.counts.tags.created += 1;
    else ctx.counts.tags.updated += 1;
    result.set(tag.sourceId, id);
    ctx.remember("tag", tag.sourceId, id);
  }
  return result;
}

/** The source's tags, plus (roadmap) a tag per source board. */
export function tagsToWrite(ctx: WriteContext, tags: ImportTag[], boards: ImportBoard[]) {
  const list: { sourceId: string; name: string; path: string }[] = tags.map((t) => ({ sourceId: t.sourceId, name: t.name, path: t.path }));
  if (ctx.options.boards === "roadmap") {
    for (const board of boards) list.push({ sourceId: boardTagId(board.sourceId), name: board.name, path: board.path });
  }
  return list;
}

async function freeBoardSlug(ctx: WriteContext, name: string): Promise<string> {
  const base =
    name
      .toLowerCase()
      .normalize("NFKD")
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 60) || "board";
  const taken = new Set(
    (await ctx.trx.selectFrom("boards").select("slug").where("project_id", "=", ctx.projectId).execute()).map((row) => row.slug),
  );
  taken.add("roadmap");
  let slug = base;
  for (let n = 2; taken.has(slug); n += 1) slug = `${base}-${n}`;
  return slug;
}

/** The board's first column; a board left without columns gets one "Ideas" column. */
async function firstColumn(ctx: WriteContext, boardId: number): Promise<number> {
  const row = await ctx.trx
    .selectFrom("columns")
    .select("id")
    .where("board_id", "=", boardId)
    .orderBy("position")
    .orderBy("id")
    .executeTakeFirst();
  return row?.id ?? (await ideasColumn(ctx, boardId));
}

function ideasColumn(ctx: WriteContext, boardId: number): Promise<number> {
  return insertColumn(ctx.trx, {
    project_id: ctx.projectId,
    board_id: boardId,
    name: "Ideas",
    color: null,
    is_votable: true,
    status: null,
  });
}

/** `boards: custom`: source board id -> the custom board its features go to. */
export async function writeCustomBoards(ctx: WriteContext, boards: ImportBoard[]): Promise<Map<string, CustomBoard>> {
  const result = new Map<string, CustomBoard>();
  const alive = await existingIds(
    ctx.trx,
    "boards",
    ctx.projectId,
    boards.flatMap((b) => {
      const m = ctx.mapped.board.get(b.sourceId);
      return m ? [m.target] : [];
    }),
  );
  for (const board of boards) {
    ctx.tick();
    if (result.has(board.sourceId)) continue;
    const m = ctx.mapped.board.get(board.sourceId);
    if (m) {
      if (alive.has(m.target)) {
        result.set(board.sourceId, { id: m.target, firstColumnId: await firstColumn(ctx, m.target) });
        ctx.counts.boards.updated += 1;
      } else {
        ctx.counts.boards.skipped += 1;
        ctx.warn(board.path, "the board an earlier import made was deleted since; its new features go to the roadmap");
      }
      continue;
    }
    const name = board.name.trim().slice(0, 100) || "Imported";
    const found = await ctx.trx
      .selectFrom("boards")
      .select("id")
      .where("project_id", "=", ctx.projectId)
      .where("kind", "=", "custom")
      .where(sql`lower(name)`, "=", name.toLowerCase())
      .orderBy("id")
      .executeTakeFirst();
    let id: number;
    if (found) {
      id = found.id;
      ctx.counts.boards.updated += 1;
    } else {
      id = await insertCustomBoard(ctx.trx, ctx.projectId, { name, slug: await freeBoardSlug(ctx, name) });
      await ideasColumn(ctx, id);
      ctx.counts.boards.created += 1;
    }
    result.set(board.sourceId, { id, firstColumnId: await firstColumn(ctx, id) });
    ctx.remember("board", board.sourceId, id);
  }
  return result;
}
