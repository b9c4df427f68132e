/**
 * Source posts -> features (imports-v3.md, "Mapping", Features; owner-api-v3.md Rule 1 for
 * where a feature sits). Heading cut to 254 characters (warning), description as written (cut
 * to the board's 2000 characters, warning),
 * created_at kept, status by mapSourceStatus (unknown: open, warning). `boards: roadmap`: the
 * roadmap, in the first column with the feature's status (a status no column has gets a column
 * added last, named after it); `boards: custom`: the first column of its source board's custom
 * board. A re-run updates heading, description, status (and so the roadmap column), developer
 * response and tags of features the source made; a feature deleted since is not re-created.
 *
 * Rows are inserted with ids taken from the features sequence beforehand, so a batch's rows are
 * known by id without relying on RETURNING order. The search and similarity tables
 * (feature_search, feature_similarity, feature_similarity_postings) are kept by the triggers on
 * features, as for every other insert.
 */
import { sql } from "kysely";
import { insertColumn } from "../../board/index.ts";
import type { ImportFeature } from "../import-data.ts";
import { type FeatureStatusName, mapSourceStatus } from "../status-map.ts";
import { boardTagId, type CustomBoard } from "./catalog.ts";
import { BATCH, cutText, existingIds, parseTime, type WriteContext } from "./context.ts";

export const HEADING_MAX = 254;
/** The board's limit of a description (feedback-board-api-v3.md, "Limits"). */
export const DESCRIPTION_MAX = 2000;

const STATUS_WORDS: Record<FeatureStatusName, string> = {
  open: "Open",
  planned: "Planned",
  in_progress: "In progress",
  done: "Done",
  denied: "Denied",
  archived: "Archived",
};

/** A feature of this import: its row id and, for merges, the original it duplicates. */
export interface WrittenFeature {
  id: number;
  /** True when this run created it. */
  created: boolean;
  feature: ImportFeature;
}

interface Placement {
  boardId: number;
  columnId: number | null;
  status: string;
}

/** The roadmap's columns, growing by a column per status no column had (added last). */
class Roadmap {
  private constructor(
    readonly id: number,
    private readonly columns: { id: number; status: string | null }[],
  ) {}

  static async load(ctx: WriteContext): Promise<Roadmap> {
    const board = await ctx.trx
      .selectFrom("boards")
      .select("id")
      .where("project_id", "=", ctx.projectId)
      .where("kind", "=", "roadmap")
      .executeTakeFirstOrThrow();
    const columns = await ctx.trx
      .selectFrom("columns")
      .select(["id", "status"])
      .where("board_id", "=", board.id)
      .orderBy("position")
      .orderBy("id")
      .execute();
    return new Roadmap(board.id, columns);
  }

  async place(ctx: WriteContext, status: FeatureStatusName): Promise<Placement> {
    if (status === "archived") return { boardId: this.id, columnId: null, status };
    let column = this.columns.find((c) => c.status === status);
    if (!column) {
      const id = await insertColumn(ctx.trx, {
        project_id: ctx.projectId,
        board_id: this.id,
        name: STATUS_WORDS[status],
        color: null,
        is_votable: true,
        status,
      });
      column = { id, status };
      this.columns.push(column);
    }
    return { boardId: this.id, columnId: column.id, status };
  }
}

function statusOf(ctx: WriteContext, feature: ImportFeature): FeatureStatusName {
  const mapped = mapSourceStatus(ctx.source, feature.status, ctx.options.statusMap);
  if (!mapped.known) {
    ctx.warn(feature.path, `unknown status "${feature.status}": imported as open (status_map can name it)`);
    return "open";
  }
  if (mapped.status === "merged") {
    // A duplicate is archived by its merge; without an original it stays open.
    if (feature.mergedIntoSourceId === null) ctx.warn(feature.path, "a duplicate without the post it duplicates: imported as open");
    return "open";
  }
  return mapped.status;
}

function targetDate(ctx: WriteContext, feature: ImportFeature): Date | null {
  if (feature.targetDate === null) return null;
  const time = Date.parse(`${feature.targetDate}T00:00:00Z`);
  if (Number.isNaN(time) || !/^\d{4}-\d{2}-\d{2}$/.test(feature.targetDate)) {
    ctx.warn(feature.path, `target date "${feature.targetDate}" does not parse: left empty`);
    return null;
  }
  return new Date(time);
}

/** The feature's tag ids: its source tags and (roadmap) its source board's tag. */
function tagIdsOf(ctx: WriteContext, feature: ImportFeature, tags: Map<string, number>): number[] {
  const ids = new Set<number>();
  const sources = [...feature.tagSourceIds];
  if (ctx.options.boards === "roadmap" && feature.boardSourceId !== null) sources.push(boardTagId(feature.boardSourceId));
  for (const sourceId of sources) {
    const id = tags.get(sourceId);
    if (id !== undefined) ids.add(id);
    else if (!sourceId.startsWith("board:")) ctx.warn(feature.path, `unknown tag "${sourceId}": not applied`);
  }
  return [...ids];
}

/**
 * Writes `features`; returns source id -> WrittenFeature for every feature of this import that
 * exists after it (created or updated), and the ids of features that existed before (the caller
 * locks them before counting, see index.ts).
 */
export async function writeFeatures(
  ctx: WriteContext,
  features: ImportFeature[],
  deps: { voters: Map<string, number>; tags: Map<string, number>; boards: Map<string, CustomBoard> },
): Promise<{ bySource: Map<string, WrittenFeature>; all: WrittenFeature[] }> {
  const { trx, projectId } = ctx;
  const roadmap = await Roadmap.load(ctx);
  const mappedTargets = features.flatMap((f) => {
    const m = f.sourceId === null ? undefined : ctx.mapped.feature.get(f.sourceId);
    return m ? [m.target] : [];
  });
  const alive = await existingIds(trx, "features", projectId, mappedTargets);
  // Existing features of this source, locked in id order before anything else of theirs changes
  // (the order a vote takes: feature row first).
  const existing = [...alive].sort((a, b) => a - b);
  const current = new Map<number, { board_id: number; board_kind: string; column_id: number | null; status: string; merged: boolean }>();
  for (let i = 0; i < existing.length; i += 10_000) {
    const rows = await trx
      .selectFrom("features")
      .innerJoin("boards", "boards.id", "features.board_id")
      .select([
        "features.id",
        "features.board_id",
        "boards.kind as board_kind",
        "features.column_id",
        "features.status",
        sql<boolean>`EXISTS (SELECT 1 FROM feature_merges m WHERE m.source_id = features.id)`.as("merged"),
      ])
      .where("features.id", "=", sql<number>`any(${existing.slice(i, i + 10_000)}::int[])`)
      .orderBy("features.id")
      .forNoKeyUpdate("features")
      .execute();
    for (const row of rows) current.set(row.id, row);
  }

  const bySource = new Map<string, WrittenFeature>();
  const all: WrittenFeature[] = [];
  const positions = new Map<number, number>();
  const nextPosition = async (boardId: number) => {
    let p = positions.get(boardId);
    if (p === undefined) {
      const row = await sql<{ p: number }>`SELECT coalesce(max(position), -1)::int AS p FROM features WHERE board_id = ${boardId}`.execute(
        trx,
      );
      p = row.rows[0]!.p;
    }
    positions.set(boardId, p + 1);
    return p + 1;
  };

  type Row = { id: number; values: Record<string, unknown>; tagIds: number[]; written: WrittenFeature };
  let creates: Row[] = [];
  const flushCreates = async () => {
    if (creates.length === 0) return;
    const batch = creates;
    creates = [];
    const ids = await sql<{ id: number }>`SELECT nextval(pg_get_serial_sequence('features', 'id'))::int AS id
      FROM generate_series(1, ${batch.length})`.execute(trx);
    batch.forEach((row, i) => {
      row.id = ids.rows[i]!.id;
      row.written.id = row.id;
    });
    await trx
      .insertInto("features")
      .values(batch.map((row) => ({ id: row.id, ...row.values }) as never))
      .execute();
    const links = batch.flatMap((row) => row.tagIds.map((tag_id) => ({ feature_id: row.id, tag_id })));
    for (let i = 0; i < links.length; i += BATCH)
      await trx
        .insertInto("feature_tags")
        .values(links.slice(i, i + BATCH))
        .execute();
    for (const row of batch) {
      if (row.written.feature.sourceId !== null) ctx.remember("feature", row.written.feature.sourceId, row.id);
    }
  };

  const seen = new Set<string>();
  for (const feature of features) {
    ctx.tick();
    if (feature.sourceId !== null) {
      if (seen.has(feature.sourceId)) {
        ctx.counts.features.skipped += 1;
        ctx.warn(feature.path, `a second post with id "${feature.sourceId}" is skipped`);
        continue;
      }
      seen.add(feature.sourceId);
    }
    const title = feature.title.trim();
    if (title === "") {
      ctx.counts.features.skipped += 1;
      ctx.warn(feature.path, "a post without a title is skipped");
      continue;
    }
    const createdAt = parseTime(feature.createdAt, ctx.now);
    if (createdAt === undefined) {
      ctx.counts.features.skipped += 1;
      ctx.warn(feature.path, `created_at "${feature.createdAt}" does not parse: skipped`);
      continue;
    }
    const { text: heading, cut } = cutText(title, HEADING_MAX);
    if (cut) ctx.warn(feature.path, `title cut to ${HEADING_MAX} characters`);
    const long = cutText(feature.description, DESCRIPTION_MAX);
    if (long.cut) ctx.warn(feature.path, `description cut to ${DESCRIPTION_MAX} characters (the board's limit)`);
    const status = statusOf(ctx, feature);
    const tagIds = tagIdsOf(ctx, feature, deps.tags);
    const description = long.text === "" ? null : long.text;
    const m = feature.sourceId === null ? undefined : ctx.mapped.feature.get(feature.sourceId);

    if (m) {
      const now = current.get(m.target);
      if (!now) {
        ctx.counts.features.skipped += 1;
        ctx.warn(feature.path, "the feature an earlier import made of this post was deleted since; not re-created");
        continue;
      }
      let placement: Placement = { boardId: now.board_id, columnId: now.column_id, status: now.status };
      if (!now.merged && now.status !== status) {
        if (now.board_kind === "roadmap") placement = await roadmap.place(ctx, status);
        else if (status === "archived") placement = { ...placement, columnId: null, status };
        else {
          const column =
            now.column_id ??
            (
              await trx
                .selectFrom("columns")
                .select("id")
                .where("board_id", "=", now.board_id)
                .orderBy("position")
                .orderBy("id")
                .executeTakeFirst()
            )?.id ??
            null;
          placement = { ...placement, columnId: column, status };
        }
      }
      // Again is harmless (rule 4): a feature the source left as it was keeps its updated_at and tags.
      const had = (await trx.selectFrom("feature_tags").select("tag_id").where("feature_id", "=", m.target).execute())
        .map((row) => row.tag_id)
        .sort((a, b) => a - b);
      const wanted = [...tagIds].sort((a, b) => a - b);
      const tagsChanged = had.length !== wanted.length || had.some((id, i) => id !== wanted[i]);
      const changed = sql<boolean>`ROW(heading::text, description::text, status::text, column_id, developer_response::text, response_is_denial)
        IS DISTINCT FROM ROW(${heading}::text, ${description}::text, ${placement.status}::text, ${placement.columnId}::int,
          ${feature.developerResponse}::text, ${feature.responseIsDenial}::boolean)`;
      await trx
        .updateTable("features")
        .set({
          heading,
          description,
          status: placement.status,
          column_id: placement.columnId,
          developer_response: feature.developerResponse,
          response_is_denial: feature.responseIsDenial,
          updated_at: tagsChanged ? ctx.now : sql<Date>`CASE WHEN ${changed} THEN ${ctx.now}::timestamptz ELSE updated_at END`,
        })
        .where("id", "=", m.target)
        .execute();
      if (tagsChanged) {
        await trx.deleteFrom("feature_tags").where("feature_id", "=", m.target).execute();
        if (tagIds.length > 0)
          await trx
            .insertInto("feature_tags")
            .values(tagIds.map((tag_id) => ({ feature_id: m.target, tag_id })))
            .execute();
      }
      const written = { id: m.target, created: false, feature };
      bySource.set(feature.sourceId!, written);
      all.push(written);
      ctx.counts.features.updated += 1;
      continue;
    }

    let placement: Placement;
    const custom = feature.boardSourceId === null ? undefined : deps.boards.get(feature.boardSourceId);
    if (ctx.options.boards === "custom" && custom) {
      placement =
        status === "archived"
          ? { boardId: custom.id, columnId: null, status }
          : { boardId: custom.id, columnId: custom.firstColumnId, status };
    } else {
      placement = await roadmap.place(ctx, status);
    }
    const written: WrittenFeature = { id: 0, created: true, feature };
    creates.push({
      id: 0,
      tagIds,
      written,
      values: {
        project_id: projectId,
        board_id: placement.boardId,
        column_id: placement.columnId,
        status: placement.status,
        heading,
        description,
        author_voter_id: feature.authorSourceId === null ? null : (deps.voters.get(feature.authorSourceId) ?? null),
        is_approved: feature.approved,
        is_pinned: false,
        position: await nextPosition(placement.boardId),
        progress: null,
        effort: null,
        developer_response: feature.developerResponse,
        response_is_denial: feature.responseIsDenial,
        linked_feature_id: null,
        start_date: null,
        target_date: targetDate(ctx, feature),
        trending_score: null,
        created_at: createdAt,
        updated_at: createdAt,
      },
    });
    if (feature.sourceId !== null) bySource.set(feature.sourceId, written);
    all.push(written);
    ctx.counts.features.created += 1;
    if (creates.length >= BATCH) await flushCreates();
  }
  await flushCreates();
  return { bySource, all };
}
