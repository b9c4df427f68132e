/**
 * Comment reads: the feature's visibility, a page of top-level comments, their count and all
 * replies to them in one statement, with has_liked by EXISTS (contract, CommentObject), compiled
 * once per shape (db/query-template.ts). Writes live in
 * comments.writes.repository.ts.
 */
import { type SelectQueryBuilder, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import { QueryTemplate } from "../../../db/query-template.ts";
import type { Database, ProjectSettings } from "../../../db/schema.ts";
import type { PageRequest } from "../../lib/http/pagination.ts";
import { pageOffset } from "../../lib/http/pagination.ts";
import { visibilityShapeKey, visibleFeatureQuery } from "../features/index.ts";
import type { CommentSort } from "./comments.schemas.ts";

/** One comment as read, with its author's name and role and the viewer's relation to it. */
export interface CommentRow {
  id: number;
  feature_id: number;
  parent_id: number | null;
  content: string;
  created_at: Date;
  like_count: number;
  author_name: string;
  author_role: "owner" | "editor" | "viewer" | null;
  /** The author's internal voter id (never sent: the subject of the comment's events). */
  author_id: number;
  has_liked: boolean;
  is_own: boolean;
}

type CommentsFrom = SelectQueryBuilder<Database, "comments", object>;

/** The CommentRow columns, `viewerId` being the request's voter (null: no identity). */
export function selectCommentRow(query: CommentsFrom, viewerId: number | null) {
  return query.innerJoin("voters", "voters.id", "comments.voter_id").select((eb) => [
    "comments.id",
    "comments.feature_id",
    "comments.parent_id",
    "comments.content",
    "comments.created_at",
    "comments.like_count",
    "voters.display_name as author_name",
    "voters.role as author_role",
    "comments.voter_id as author_id",
    viewerId === null
      ? sql<boolean>`false`.as("has_liked")
      : eb
          .exists(
            eb
              .selectFrom("comment_likes")
              .select(sql`1`.as("one"))
              .whereRef("comment_likes.comment_id", "=", "comments.id")
              .where("comment_likes.voter_id", "=", viewerId),
          )
          .$castTo<boolean>()
          .as("has_liked"),
    viewerId === null ? sql<boolean>`false`.as("is_own") : eb("comments.voter_id", "=", viewerId).$castTo<boolean>().as("is_own"),
  ]);
}

export interface CommentThreadPage {
  /** Top-level comments of the page, in the requested order. */
  topLevel: CommentRow[];
  /** Every reply to those comments, oldest first. */
  replies: CommentRow[];
  /** Top-level comments of the feature across all pages. */
  total: number;
}

/** The feature whose comments are read, and who reads them (features.visibility.ts decides). */
export interface CommentThreadTarget {
  project: { id: number; settings: ProjectSettings };
  featureId: number;
  viewerId: number | null;
}

/** What makes two page statements different SQL (db/query-template.ts). */
interface ThreadPageShape {
  sort: CommentSort;
  viewer: boolean;
  settings: ProjectSettings;
}

interface ThreadPageValues {
  projectId: number;
  featureId: number;
  viewerId: number;
  limit: number;
  offset: number;
}

/** A row of the thread statement: a comment (or the nulls of an empty page), its part and the total. */
type ThreadRow = { [K in keyof CommentRow]: CommentRow[K] | null } & {
  /** 0: a top-level comment of the page (or the empty page's row of nulls); 1: a reply to one. */
  part: number;
  /** The top-level comments' count (on part 0 rows). */
  total: number | null;
};

/**
 * The visibility check, the page of top-level comments, their count and every reply to them
 * in one statement (one round trip per page build): the page's rows beside the visible
 * feature (one row of nulls but the total when the page is empty), part 0, in the page's
 * order; then the replies, part 1, oldest first; no row at all when the feature is not visible
 * to the viewer. Compiled once per shape (sort, whether a viewer reads, the visibility settings).
 */
const threadStatement = new QueryTemplate<ThreadPageShape, ThreadPageValues, ThreadRow>(
  (shape) => `${shape.sort},viewer:${shape.viewer},${visibilityShapeKey(shape.settings)}`,
  (db, shape, param) => {
    const viewerId = shape.viewer ? param("viewerId") : null;
    const featureId = param("featureId");
    const visible = visibleFeatureQuery(db, shape.settings, {
      projectId: param("projectId"),
      featureId,
      voterId: viewerId,
      allowVoting: false,
    });
    let page = selectCommentRow(db.selectFrom("comments"), viewerId)
      .where("comments.feature_id", "=", featureId)
      .where("comments.parent_id", "is", null);
    if (shape.sort === "top") page = page.orderBy("comments.like_count", "desc");
    const direction = shape.sort === "oldest" ? "asc" : "desc";
    page = page.orderBy("comments.created_at", direction).orderBy("comments.id", direction).limit(param("limit")).offset(param("offset"));
    // Both parts select the columns of selectCommentRow in its order, so top.* (then total)
    // lines up with replies.* (then total) in the UNION.
    const replies = selectCommentRow(db.selectFrom("comments"), viewerId).where(
      "comments.parent_id",
      "=",
      sql<number>`any(ARRAY(SELECT top.id FROM top WHERE top.id IS NOT NULL))`,
    );
    // The joined page keeps its order only if it is asked for again.
    const pageOrder = sql.raw(`${shape.sort === "top" ? "like_count DESC, " : ""}created_at ${direction}, id ${direction}`);
    const thread = sql<ThreadRow & { ord: number }>`(
      WITH top AS (
        SELECT page.*, (SELECT count(*)::int FROM comments c WHERE c.feature_id = ${featureId} AND c.parent_id IS NULL) AS total
        FROM (${visible}) AS visible LEFT JOIN (${page}) AS page ON true
      )
      SELECT top.*, 0 AS part, row_number() OVER (ORDER BY ${pageOrder}) AS ord FROM top
      UNION ALL
      SELECT replies.*, NULL::int AS total, 1 AS part, row_number() OVER (ORDER BY created_at, id) AS ord
      FROM (${replies}) AS replies)`;
    return db.selectFrom(thread.as("thread")).selectAll("thread").orderBy("thread.part").orderBy("thread.ord") as never;
  },
);

/**
 * A page of the feature's top-level comments in `sort` order (newest: created_at desc; oldest:
 * created_at asc; top: like_count desc then newest; id breaks ties), every reply to them, and
 * the number of top-level comments, in one round trip; undefined when the feature is not
 * visible to the viewer (missing, of another project, or hidden: features.visibility.ts).
 */
export async function listCommentThreads(
  db: Db,
  target: CommentThreadTarget,
  sort: CommentSort,
  paging: PageRequest,
): Promise<CommentThreadPage | undefined> {
  const { project, featureId, viewerId } = target;
  const { rows } = await threadStatement.execute(
    db,
    { sort, viewer: viewerId !== null, settings: project.settings },
    { projectId: project.id, featureId, viewerId: viewerId ?? 0, limit: paging.per_page, offset: pageOffset(paging) },
  );
  if (rows.length === 0) return undefined;
  const total = Number(rows[0]!.total);
  const topLevel: CommentRow[] = [];
  const replies: CommentRow[] = [];
  for (const { part, total: _total, ...row } of rows) {
    if (row.id === null) continue;
    (part === 0 ? topLevel : replies).push(row as CommentRow);
  }
  return { topLevel, replies, total };
}
