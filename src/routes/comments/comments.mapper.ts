/** Comment rows -> CommentObject (contract, CommentObject; owner-api-v3.md for the owner's view). */
import { rfc3339 } from "../../lib/http/timestamps.ts";
import type { CommentRow } from "./comments.repository.ts";
import type { CommentObject } from "./comments.schemas.ts";

export type CommentOut = ReturnType<(typeof CommentObject)["parse"]>;

/** Maps a row to CommentObject; only owner and editor are reported as author_role. */
export function toCommentObject(row: CommentRow, replies: CommentOut[]): CommentOut {
  return {
    id: row.id,
    feature_id: row.feature_id,
    parent_id: row.parent_id,
    content: row.content,
    author_name: row.author_name,
    author_role: row.author_role === "owner" || row.author_role === "editor" ? row.author_role : null,
    created_at: rfc3339(row.created_at),
    like_count: row.like_count,
    has_liked: Boolean(row.has_liked),
    is_own: Boolean(row.is_own),
    replies,
  };
}

/**
 * A comment as the owner API shows it (GET /admin/comments, the comment events): seen by no
 * voter (has_liked and is_own false), replies listed as rows of their own.
 */
export function ownerCommentObject(row: CommentRow): CommentOut {
  return toCommentObject({ ...row, has_liked: false, is_own: false }, []);
}
