/**
 * Comment reads: a page of top-level comments and all replies to them, in two queries plus one
 * count, with has_liked by EXISTS (contract, CommentObject). Writes live in
 * comments.writes.repository.ts.
 */
import { type SelectQueryBuilder, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { Database } from "../../../db/schema.ts";
import type { PageRequest } from "../../lib/http/pagination.ts";
import { pageOffset } from "../../lib/http/pagination.ts";
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

/**
 * A page of the feature's top-level comments in `sort` order (newest: created_at desc; oldest:
 * created_at asc; top: like_count desc then newest; id breaks ties), every reply to them, and
 * the number of top-level comments. The feature must already be known to be visible.
 */
export async function listCommentThreads(
  db: Db,
  featureId: number,
  viewerId: number | null,
  sort: CommentSort,
  paging: PageRequest,
): Promise<CommentThreadPage> {
  let pageQuery = selectCommentRow(db.selectFrom("comments"), viewerId)
    .where("comments.feature_id", "=", featureId)
    .where("comments.parent_id", "is", null);
  if (sort === "top") pageQuery = pageQuery.orderBy("comments.like_count", "desc");
  const direction = sort === "oldest" ? "asc" : "desc";
  pageQuery = pageQuery.orderBy("comments.created_at", direction).orderBy("comments.id", direction);

  const [topLevel, counted] = await Promise.all([
    pageQuery.limit(paging.per_page).offset(pageOffset(paging)).execute(),
    db
      .selectFrom("comments")
      .select(sql<number>`count(*)::int`.as("total"))
      .where("feature_id", "=", featureId)
      .where("parent_id", "is", null)
      .executeTakeFirstOrThrow(),
  ]);
  const parentIds = topLevel.map((row) => row.id);
  const replies =
    parentIds.length === 0
      ? []
      : await selectCommentRow(db.selectFrom("comments"), viewerId)
          .where("comments.parent_id", "in", parentIds)
          .orderBy("comments.created_at", "asc")
          .orderBy("comments.id", "asc")
          .execute();
  return { topLevel, replies, total: counted.total };
}
