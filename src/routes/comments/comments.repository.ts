/**
 * Comment reads: the feature's visibility, a page of top-level comments and their count in one
 * statement, then all replies to them, with has_liked by EXISTS (contract, CommentObject); both
 * statements compiled once per shape (db/query-template.ts). Writes live in
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

type ThreadPageRow = { [K in keyof CommentRow]: CommentRow[K] | null } & { total: number };

/**
 * The visibility check, the page of top-level comments and their count in one statement: one
 * row per comment of the page beside the visible feature (one row of nulls but the total when
 * the page is empty), no row at all when the feature is not visible to the viewer. Compiled
 * once per shape (sort, whether a viewer reads, the visibility settings).
 */
const threadPageStatement = new QueryTemplate<ThreadPageShape, ThreadPageValues, ThreadPageRow>(
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
    let query = db
      .selectFrom(visible.as("visible"))
      .leftJoin(page.as("page"), (join) => join.onTrue())
      .selectAll("page")
      .select(sql<number>`(SELECT count(*)::int FROM comments c WHERE c.feature_id = ${featureId} AND c.parent_id IS NULL)`.as("total"));
    // The joined page keeps its order only if it is asked for again.
    if (shape.sort === "top") query = query.orderBy("page.like_count", "desc");
    return query.orderBy("page.created_at", direction).orderBy("page.id", direction) as never;
  },
);

/** Every reply to the comments `parentIds`, oldest first; compiled once per shape (a viewer or not). */
const repliesStatement = new QueryTemplate<boolean, { parentIds: readonly number[]; viewerId: number }, CommentRow>(
  (viewer) => `viewer:${viewer}`,
  (db, viewer, param) =>
    selectCommentRow(db.selectFrom("comments"), viewer ? param("viewerId") : null)
      .where("comments.parent_id", "=", sql<number>`any(${param("parentIds")}::int[])`)
      .orderBy("comments.created_at", "asc")
      .orderBy("comments.id", "asc") as never,
);

/**
 * A page of the feature's top-level comments in `sort` order (newest: created_at desc; oldest:
 * created_at asc; top: like_count desc then newest; id breaks ties), every reply to them, and
 * the number of top-level comments, in two round trips; undefined when the feature is not
 * visible to the viewer (missing, of another project, or hidden: features.visibility.ts).
 */
export async function listCommentThreads(
  db: Db,
  target: CommentThreadTarget,
  sort: CommentSort,
  paging: PageRequest,
): Promise<CommentThreadPage | undefined> {
  const { project, featureId, viewerId } = target;
  const { rows } = await threadPageStatement.execute(
    db,
    { sort, viewer: viewerId !== null, settings: project.settings },
    { projectId: project.id, featureId, viewerId: viewerId ?? 0, limit: paging.per_page, offset: pageOffset(paging) },
  );
  if (rows.length === 0) return undefined;
  const total = Number(rows[0]!.total);
  const topLevel = rows.filter((row) => row.id !== null) as unknown as CommentRow[];
  const replies =
    topLevel.length === 0
      ? []
      : (await repliesStatement.execute(db, viewerId !== null, { parentIds: topLevel.map((row) => row.id), viewerId: viewerId ?? 0 })).rows;
  return { topLevel, replies, total };
}
