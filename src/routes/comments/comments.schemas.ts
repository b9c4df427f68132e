/**
 * The comment objects of the contract ("Resources and their fields": CommentObject,
 * CommentDeletedObject, LikeObject) and the request shapes of the comment routes.
 */
import { z } from "@hono/zod-openapi";
import { integerParam } from "../../contract/params.ts";

/** Contract, "Limits": comment content is at most 2000 characters (counted as code points). */
export const COMMENT_MAX_CHARACTERS = 2000;

export const COMMENT_SORTS = ["newest", "oldest", "top"] as const;
export type CommentSort = (typeof COMMENT_SORTS)[number];

/** The fields of a comment; CommentObject adds `replies` (one level deep). */
interface CommentShape {
  id: number;
  feature_id: number;
  parent_id: number | null;
  content: string;
  author_name: string;
  author_role: "owner" | "editor" | null;
  created_at: string;
  like_count: number;
  has_liked: boolean;
  is_own: boolean;
  replies: CommentShape[];
}

export const CommentObject: z.ZodType<CommentShape> = z
  .object({
    id: z.number().int().openapi({ description: "Comment id, used by the like and delete routes", example: 7 }),
    feature_id: z.number().int().openapi({ description: "Feature the thread belongs to", example: 41 }),
    parent_id: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Top-level comment this replies to; null for a top-level comment", example: null }),
    content: z.string().openapi({ description: "Plain text, as written", example: "Yes please, my eyes will thank you." }),
    author_name: z.string().openapi({ description: "Account name, the name an SSO token carried, or a generated handle", example: "Ada" }),
    author_role: z
      .enum(["owner", "editor"])
      .nullable()
      .openapi({ description: "owner or editor when the author speaks for the project; null for everyone else", example: null }),
    created_at: z.string().openapi({ description: "When it was written, RFC 3339 UTC", example: "2026-11-20T09:30:00.000Z" }),
    like_count: z.number().int().openapi({ description: "Voters who like it", example: 3 }),
    has_liked: z.boolean().openapi({ description: "Whether the request's voter likes it; false without an identity", example: false }),
    is_own: z.boolean().openapi({ description: "Whether the request's voter wrote it; false without an identity", example: false }),
    get replies() {
      return z.array(CommentObject).openapi({
        description: "Replies in written order (oldest first), all of them; empty on a reply",
        example: [],
      });
    },
  })
  .openapi("CommentObject");

/**
 * The `object` of comment.created and comment.deleted (owner-api-v3.md, "Events"): the
 * CommentObject as the owner API shows it (has_liked and is_own false, replies as rows of their
 * own), except that `content` and `author_name` become null in stored events once the author is
 * erased (Rule 3).
 */
export const CommentEventObject = z
  .object({
    id: z.number().int().openapi({ description: "Comment id", example: 7 }),
    feature_id: z.number().int().openapi({ description: "Feature the thread belongs to", example: 41 }),
    parent_id: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Top-level comment this replies to; null for a top-level comment", example: null }),
    content: z
      .string()
      .nullable()
      .openapi({ description: "Plain text, as written; null once the author is erased", example: "Yes please, my eyes will thank you." }),
    author_name: z.string().nullable().openapi({ description: "The author's name; null once the author is erased", example: "Ada" }),
    author_role: z
      .enum(["owner", "editor"])
      .nullable()
      .openapi({ description: "owner or editor when the author speaks for the project; null for everyone else", example: null }),
    created_at: z.string().openapi({ description: "When it was written, RFC 3339 UTC", example: "2026-11-20T09:30:00.000Z" }),
    like_count: z.number().int().openapi({ description: "Voters who like it", example: 3 }),
    has_liked: z.boolean().openapi({ description: "Always false: no voter reads an event", example: false }),
    is_own: z.boolean().openapi({ description: "Always false: no voter reads an event", example: false }),
    replies: z.array(CommentObject).openapi({ description: "Always empty: replies have events of their own", example: [] }),
  })
  .openapi("CommentEventObject");

export const CommentDeletedObject = z
  .object({
    deleted: z.boolean().openapi({ description: "Always true; failures arrive as errors", example: true }),
    feature_id: z.number().int().openapi({ description: "Feature the comment was on", example: 41 }),
    comment_count: z.number().int().nullable().openapi({
      description: "The feature's comment count after the deletion, replies included; null when comments are hidden",
      example: 4,
    }),
  })
  .openapi("CommentDeletedObject");

export const LikeObject = z
  .object({
    comment_id: z.number().int().openapi({ description: "The comment", example: 7 }),
    has_liked: z.boolean().openapi({ description: "The voter's like state after the toggle", example: true }),
    like_count: z.number().int().openapi({ description: "The comment's like count after the toggle", example: 4 }),
  })
  .openapi("LikeObject");

export const CommentsQuery = z.object({
  page: integerParam(1, 1_000_000)
    .default(1)
    .openapi({
      param: { name: "page", in: "query" },
      description: "Page of top-level comments, one based",
      example: 1,
    }),
  per_page: integerParam(1, 100)
    .default(20)
    .openapi({
      param: { name: "per_page", in: "query" },
      description: "Top-level comments per page, at most 100; replies do not count",
      example: 20,
    }),
  sort: z
    .enum(COMMENT_SORTS)
    .default("newest")
    .openapi({
      param: { name: "sort", in: "query" },
      description: "Order of top-level comments: newest, oldest, or top (most liked, then newest). Replies are always oldest first",
      example: "newest",
    }),
});

export const NewComment = z
  .object({
    content: z
      .string()
      .refine((value) => value.trim().length > 0, { message: "must not be empty" })
      .refine((value) => Array.from(value).length <= COMMENT_MAX_CHARACTERS, {
        message: `must be at most ${COMMENT_MAX_CHARACTERS} characters`,
      })
      // Postgres text cannot hold NUL; refusing it here beats a 500 from the driver.
      .refine((value) => !value.includes("\u0000"), { message: "must not contain NUL characters" })
      // JSON Schema counts string length in code points, as the refinement above does.
      .openapi({
        description: "Plain text, 1 to 2000 characters, not only whitespace; stored as sent",
        example: "Yes please!",
        minLength: 1,
        maxLength: COMMENT_MAX_CHARACTERS,
      }),
    parent_id: z.number().int().min(1).max(2147483647).nullable().optional().openapi({
      description: "Id of a top-level comment of the same feature to reply to; omit or null for a top-level comment",
      example: 7,
    }),
  })
  .openapi("NewComment");
