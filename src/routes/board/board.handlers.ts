/** Handlers of the board routes: repository rows -> BoardDocument (contract, BoardDocument). */
import type { ProjectSettings } from "../../../db/schema.ts";
import type { Column } from "../../contract/schemas.ts";
import type { BoardColumnRow } from "../../lib/data/app-caches.ts";
import type { AppDeps, ProjectContext } from "../../lib/http/context.ts";
import { success } from "../../lib/http/envelope.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { listBoardColumns, listTags, readVoterCount } from "./board.repository.ts";
import type * as routes from "./board.routes.ts";
import type { BoardDocument, BoardEntry } from "./board.schemas.ts";

/** Id of the archived column, which is not a row of its own (contract, Column). */
export const ARCHIVED_COLUMN_ID = -1;

/**
 * Groups board/column rows into BoardEntry objects under the project's settings: the roadmap's
 * id is reported as 0, denied columns go when show_denied is false, and the archived column
 * (id -1, after the last position) is appended to every board when show_archived is true.
 */
export function toBoardEntries(rows: BoardColumnRow[], settings: ProjectSettings): BoardEntry[] {
  const boards = new Map<number, BoardEntry>();
  for (const row of rows) {
    let board = boards.get(row.board_id);
    if (!board) {
      board = {
        id: row.board_kind === "roadmap" ? 0 : row.board_id,
        kind: row.board_kind,
        name: row.board_name,
        slug: row.board_slug,
        columns: [],
      };
      boards.set(row.board_id, board);
    }
    if (row.column_id === null) continue;
    const status = board.kind === "roadmap" ? row.column_status : null;
    if (!settings.show_denied && status === "denied") continue;
    board.columns.push({
      id: row.column_id,
      name: row.column_name ?? "",
      color: row.column_color,
      position: row.column_position ?? 0,
      is_votable: Boolean(row.column_is_votable) && settings.allow_voting,
      status,
    });
  }
  const entries = [...boards.values()];
  if (settings.show_archived) {
    for (const board of entries) board.columns.push(archivedColumn(board));
  }
  return entries;
}

function archivedColumn(board: BoardEntry): Column {
  const last = board.columns.at(-1);
  return {
    id: ARCHIVED_COLUMN_ID,
    name: "Archived",
    color: null,
    position: last ? last.position + 1 : 0,
    is_votable: false,
    status: board.kind === "roadmap" ? "archived" : null,
  };
}

/**
 * The whole BoardDocument of a project: boards with columns and tags (kept in the app's caches,
 * cleared on every instance when an owner changes them) and the fresh voter_count, then mapped field by field.
 */
export async function buildBoardDocument(deps: Pick<AppDeps, "db" | "caches">, project: ProjectContext): Promise<BoardDocument> {
  const { db, caches } = deps;
  const [rows, tags, voterCount] = await Promise.all([
    caches.boardColumns.remember([project.id], () => listBoardColumns(db, project.id)),
    caches.tags.remember([project.id], () => listTags(db, project.id)),
    readVoterCount(db, project.id),
  ]);
  const s = project.settings;
  const boards = toBoardEntries(rows, s);
  const roadmap = boards.find((board) => board.kind === "roadmap");
  return {
    boards,
    tags: tags.map((tag) => ({ id: tag.id, name: tag.name })),
    capabilities: {
      can_comment: s.allow_comments && s.show_comments,
      can_like: s.allow_likes && s.show_comments,
      can_suggest: s.allow_suggestions && (roadmap?.columns.some((column) => column.status === "open") ?? false),
      // is_votable already folds in allow_voting; only the columns the document shows count.
      can_vote: s.allow_voting && boards.some((board) => board.columns.some((column) => column.is_votable)),
    },
    display: {
      allow_comments: s.allow_comments,
      allow_suggestions: s.allow_suggestions,
      allow_voting: s.allow_voting,
      default_mode: s.default_mode,
      score_is_weighted: s.score_is_weighted,
      show_archived: s.show_archived,
      show_comments: s.show_comments,
      show_denied: s.show_denied,
      show_progress: s.show_progress,
      show_views: s.show_views,
      show_votes: s.show_votes,
    },
    project: {
      banner_url: project.banner_url,
      currency_symbol: project.currency_symbol,
      description: project.description,
      logo_url: project.logo_url,
      name: project.name,
      show_branding: project.show_branding,
      slug: project.slug,
      voter_count: voterCount,
    },
    theme: {
      dark: colors(project.theme.dark),
      light: colors(project.theme.light),
      font: project.theme.font,
      radius: project.theme.radius,
    },
  };
}

/** Only the six ThemeColors keys, whatever else the stored JSON carries. */
function colors(c: ProjectContext["theme"]["dark"]) {
  return {
    accent: c.accent,
    background: c.background,
    border: c.border,
    card_background: c.card_background,
    text: c.text,
    text_secondary: c.text_secondary,
  };
}

// For the shared read cache: of what a vote changes, the document shows only voter_count.
export const getKeyBoard: AppRouteHandler<typeof routes.getKeyBoard> = async (c) => {
  c.set("readDependencies", { kind: "board" });
  return c.json(success(await buildBoardDocument(c.get("deps"), c.get("project"))), 200);
};

export const getProjectBoard: AppRouteHandler<typeof routes.getProjectBoard> = async (c) => {
  c.set("readDependencies", { kind: "board" });
  return c.json(success(await buildBoardDocument(c.get("deps"), c.get("project"))), 200);
};
