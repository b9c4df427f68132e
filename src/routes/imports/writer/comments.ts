/**
 * Source comments -> comments (imports-v3.md, "Mapping", Comments): author and time kept; a
 * reply to a reply hangs under its top-level comment (replies are one level deep); comments on
 * unknown posts are skipped with a warning; likes start at 0; content is cut to the board's 2000
 * characters with a warning. A re-run updates the content of
 * comments an earlier run made; one deleted since is not re-created. A comment whose source
 * names no author (or an unknown one) is written by the placeholder voter `Imported user`.
 *
 * Ids are taken from the comments sequence before the insert, so a reply can name its parent
 * within one batch and rows are known by id without relying on RETURNING order.
 */
import { sql } from "kysely";
import type { ImportComment } from "../import-data.ts";
import { BATCH, cutText, existingIds, parseTime, type WriteContext } from "./context.ts";
import type { WrittenFeature } from "./features.ts";

/** The board's limit of a comment (feedback-board-api-v3.md, "Limits"). */
export const CONTENT_MAX = 2000;

/** A comment this run inserted, for subscriptions. */
export interface WrittenComment {
  featureId: number;
  voterId: number;
}

export async function writeComments(
  ctx: WriteContext,
  comments: ImportComment[],
  deps: {
    features: Map<string, WrittenFeature>;
    voters: Map<string, number>;
    placeholder: () => Promise<number | undefined>;
  },
): Promise<WrittenComment[]> {
  const { trx } = ctx;
  const bySource = new Map<string, ImportComment>();
  for (const comment of comments) if (comment.sourceId !== null && !bySource.has(comment.sourceId)) bySource.set(comment.sourceId, comment);
  /** The top-level comment of a thread (cycles and missing parents end the walk). */
  const topOf = (comment: ImportComment): ImportComment => {
    let at = comment;
    const visited = new Set<ImportComment>([at]);
    while (at.parentSourceId !== null) {
      const parent = bySource.get(at.parentSourceId);
      if (!parent || visited.has(parent)) break;
      visited.add(parent);
      at = parent;
    }
    return at;
  };
  const alive = await existingIds(
    trx,
    "comments",
    ctx.projectId,
    comments.flatMap((c) => {
      const m = c.sourceId === null ? undefined : ctx.mapped.comment.get(c.sourceId);
      return m ? [m.target] : [];
    }),
  );
  // Top-level comments before replies, so a parent's id is known when its reply is written.
  const ordered = [...comments].sort((a, b) => Number(topOf(a) !== a) - Number(topOf(b) !== b));
  const ids = new Map<ImportComment, number>();
  const written: WrittenComment[] = [];
  const updates: { id: number; content: string }[] = [];
  let rows: {
    comment: ImportComment;
    values: { project_id: number; feature_id: number; parent_id: number | null; voter_id: number; content: string; created_at: Date };
  }[] = [];
  const flush = async () => {
    if (rows.length === 0) return;
    const batch = rows;
    rows = [];
    const next = await sql<{ id: number }>`SELECT nextval(pg_get_serial_sequence('comments', 'id'))::int AS id
      FROM generate_series(1, ${batch.length})`.execute(trx);
    const values = batch.map((row, i) => {
      const id = next.rows[i]!.id;
      ids.set(row.comment, id);
      if (row.comment.sourceId !== null) ctx.remember("comment", row.comment.sourceId, id);
      return { id, ...row.values };
    });
    await trx
      .insertInto("comments")
      .values(values as never)
      .execute();
  };
  const seen = new Set<string>();
  for (const comment of ordered) {
    ctx.tick();
    if (comment.sourceId !== null) {
      if (seen.has(comment.sourceId)) {
        ctx.counts.comments.skipped += 1;
        ctx.warn(comment.path, `a second comment with id "${comment.sourceId}" is skipped`);
        continue;
      }
      seen.add(comment.sourceId);
    }
    const content = cutText(comment.content, CONTENT_MAX);
    if (content.cut) ctx.warn(comment.path, `content cut to ${CONTENT_MAX} characters (the board's limit)`);
    const m = comment.sourceId === null ? undefined : ctx.mapped.comment.get(comment.sourceId);
    if (m) {
      if (alive.has(m.target)) {
        updates.push({ id: m.target, content: content.text });
        ids.set(comment, m.target);
        ctx.counts.comments.updated += 1;
      } else {
        ctx.counts.comments.skipped += 1;
        ctx.warn(comment.path, "the comment an earlier import made was deleted since; not re-created");
      }
      continue;
    }
    const feature = deps.features.get(comment.featureSourceId);
    if (!feature) {
      ctx.counts.comments.skipped += 1;
      ctx.warn(comment.path, `comment on unknown post "${comment.featureSourceId}": skipped`);
      continue;
    }
    if (comment.content.trim() === "") {
      ctx.counts.comments.skipped += 1;
      ctx.warn(comment.path, "an empty comment is skipped");
      continue;
    }
    const at = parseTime(comment.createdAt, ctx.now);
    if (at === undefined) {
      ctx.counts.comments.skipped += 1;
      ctx.warn(comment.path, `created_at "${comment.createdAt}" does not parse: skipped`);
      continue;
    }
    let parentId: number | null = null;
    const top = topOf(comment);
    if (top !== comment) {
      if (rows.some((row) => row.comment === top)) await flush();
      const id = ids.get(top);
      if (id === undefined) {
        ctx.counts.comments.skipped += 1;
        ctx.warn(comment.path, "a reply to a comment that was not imported is skipped");
        continue;
      }
      parentId = id;
    } else if (comment.parentSourceId !== null) {
      ctx.warn(comment.path, `reply to unknown comment "${comment.parentSourceId}": imported as a comment`);
    }
    const author = (comment.personSourceId === null ? undefined : deps.voters.get(comment.personSourceId)) ?? (await deps.placeholder());
    if (author === undefined) {
      ctx.counts.comments.skipped += 1;
      ctx.warn(comment.path, "a comment without an author is skipped");
      continue;
    }
    rows.push({
      comment,
      values: {
        project_id: ctx.projectId,
        feature_id: feature.id,
        parent_id: parentId,
        voter_id: author,
        content: content.text,
        created_at: at,
      },
    });
    written.push({ featureId: feature.id, voterId: author });
    ctx.counts.comments.created += 1;
    if (rows.length >= BATCH) await flush();
  }
  await flush();
  for (let i = 0; i < updates.length; i += BATCH) {
    const batch = updates.slice(i, i + BATCH);
    await sql`UPDATE comments SET content = u.content
      FROM unnest(${batch.map((u) => u.id)}::int[], ${batch.map((u) => u.content)}::text[]) AS u(id, content)
      WHERE comments.id = u.id AND comments.content IS DISTINCT FROM u.content`.execute(trx);
  }
  return written;
}
