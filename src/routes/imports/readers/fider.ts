/**
 * Fider (imports-v3.md, "Sources", Fider; the tables: import-formats.md §1): the admin backup zip
 * (one JSON array per table) or the posts CSV export. From the backup only `users`, `posts`,
 * `comments`, `post_votes`, `post_tags`, `tags` and `post_subscribers` are inflated; the
 * credentials (`oauth_providers.json` whole, `users.api_key`, `api_key_date`, `security_stamp`)
 * are never kept: the first is never inflated, the others are dropped while parsing
 * (imports-v3.md rule 8). Fider has no boards: features carry no board.
 */
import type { ImportFeature } from "../import-data.ts";
import { ImportFileError } from "../import-data.ts";
import type { ImportCollector } from "./collector.ts";
import { readCsvTable } from "./csv-table.ts";
import { parseSourceDate } from "./dates.ts";
import { idOf, isRecord, parseJsonFile, text } from "./files.ts";

/** The backup's tables the reader inflates (zip entry base names). */
export const FIDER_BACKUP_FILES = new Set([
  "users.json",
  "posts.json",
  "comments.json",
  "post_votes.json",
  "post_tags.json",
  "tags.json",
  "post_subscribers.json",
]);

const SECRET_KEYS = new Set(["api_key", "api_key_date", "security_stamp"]);

/** posts.status integers (Fider's enum) as the names `status_map` keys use. */
const POST_STATUS: Record<number, string> = { 0: "open", 1: "started", 2: "completed", 3: "declined", 4: "planned" };
const DUPLICATE = 5;
const DELETED = 6;

function rowsOf(files: Map<string, Uint8Array>, file: string, c: ImportCollector): Array<Record<string, unknown> | null> {
  const bytes = files.get(file);
  if (bytes === undefined) return [];
  const rows = parseJsonFile(bytes, file, SECRET_KEYS);
  if (!Array.isArray(rows)) throw new ImportFileError(`${file}: not a JSON array`);
  c.countRecords(file, rows.length);
  return rows.map((row) => (isRecord(row) ? row : null));
}

/** A timestamp column: RFC 3339 UTC, null when null; undefined when not a date. */
function timeOf(value: unknown): string | null | undefined {
  if (value === null || value === undefined) return null;
  return typeof value === "string" ? (parseSourceDate(value) ?? undefined) : undefined;
}

export function readFiderBackup(files: Map<string, Uint8Array>, c: ImportCollector): void {
  if (!files.has("posts.json")) throw new ImportFileError("posts.json: missing from the zip (not a Fider backup)");

  for (const [index, user] of rowsOf(files, "users.json", c).entries()) {
    const path = `users.json[${index}]`;
    const id = user ? idOf(user.id) : null;
    if (user === null || id === null) {
      c.skip("voters", path, "a user without id: skipped");
      continue;
    }
    const deleted = user.status === 2;
    c.addPerson({
      sourceId: id,
      ssoId: null,
      name: deleted ? null : text(user.name),
      email: deleted ? null : text(user.email),
      role: user.role === 3 ? "owner" : user.role === 2 ? "editor" : "voter",
      company: null,
      deleted,
      path,
    });
  }

  const privateTags = new Set<string>();
  for (const [index, tag] of rowsOf(files, "tags.json", c).entries()) {
    const path = `tags.json[${index}]`;
    const id = tag ? idOf(tag.id) : null;
    const name = tag ? text(tag.name) : null;
    if (tag === null || id === null || name === null) {
      c.skip("tags", path, "a tag without id or name: skipped");
      continue;
    }
    if (tag.is_public === false) {
      privateTags.add(id);
      c.skip("tags", path, `private tag ${JSON.stringify(name)}: not imported (nothing private becomes public)`);
      continue;
    }
    const color = typeof tag.color === "string" && /^[0-9a-fA-F]{6}$/.test(tag.color) ? `#${tag.color.toLowerCase()}` : null;
    c.data.tags.push({ sourceId: id, name, color, path });
  }

  const features = new Map<string, ImportFeature>();
  const deletedPosts = new Set<string>();
  for (const [index, post] of rowsOf(files, "posts.json", c).entries()) {
    const path = `posts.json[${index}]`;
    const id = post ? idOf(post.id) : null;
    const title = post ? text(post.title) : null;
    if (post === null || id === null || title === null) {
      c.skip("features", path, "a post without id or title: skipped");
      continue;
    }
    if (post.status === DELETED) {
      deletedPosts.add(id);
      c.skip("features", path, `post ${id} is deleted in Fider: skipped with its votes, comments, tags and subscriptions`);
      continue;
    }
    const createdAt = timeOf(post.created_at);
    if (createdAt === undefined) {
      c.skip("features", path, `created_at ${JSON.stringify(post.created_at)} is not a date: skipped`);
      continue;
    }
    const duplicate = post.status === DUPLICATE;
    const original = duplicate ? idOf(post.original_id) : null;
    if (duplicate && original === null) c.warn(path, "a duplicate without original_id: imported as a post of its own");
    const status = duplicate ? null : typeof post.status === "number" ? (POST_STATUS[post.status] ?? "unknown") : null;
    const feature: ImportFeature = {
      sourceId: id,
      title,
      description: typeof post.description === "string" ? post.description.trim() : "",
      status,
      boardSourceId: null,
      tagSourceIds: [],
      authorSourceId: idOf(post.user_id),
      createdAt,
      developerResponse: text(post.response),
      responseIsDenial: post.status === 3,
      targetDate: null,
      approved: post.is_approved !== false,
      mergedIntoSourceId: original,
      path,
    };
    features.set(id, feature);
    c.data.features.push(feature);
  }

  /** Records on a deleted post go with it (counted, one warning on the post already said so). */
  const onDeletedPost = (postId: string | null, kind: "votes" | "comments" | "tags" | "subscriptions", path: string): boolean => {
    if (postId === null || !deletedPosts.has(postId)) return false;
    c.skip(kind, path, null);
    return true;
  };

  for (const [index, link] of rowsOf(files, "post_tags.json", c).entries()) {
    const path = `post_tags.json[${index}]`;
    const postId = link ? idOf(link.post_id) : null;
    const tagId = link ? idOf(link.tag_id) : null;
    if (onDeletedPost(postId, "tags", path)) continue;
    // A private tag's links go with it, silently: the tag's own warning said so.
    if (tagId !== null && privateTags.has(tagId)) continue;
    const feature = postId === null ? undefined : features.get(postId);
    if (feature === undefined || tagId === null) {
      c.skip("tags", path, "a post tag for an unknown post or without tag: skipped");
      continue;
    }
    if (!feature.tagSourceIds.includes(tagId)) feature.tagSourceIds.push(tagId);
  }

  for (const [index, vote] of rowsOf(files, "post_votes.json", c).entries()) {
    const path = `post_votes.json[${index}]`;
    const postId = vote ? idOf(vote.post_id) : null;
    const userId = vote ? idOf(vote.user_id) : null;
    if (onDeletedPost(postId, "votes", path)) continue;
    const createdAt = vote ? timeOf(vote.created_at) : undefined;
    if (vote === null || postId === null || userId === null || createdAt === undefined) {
      c.skip(
        "votes",
        path,
        createdAt === undefined && vote !== null ? "created_at is not a date: skipped" : "a vote without post or user: skipped",
      );
      continue;
    }
    c.data.votes.push({ featureSourceId: postId, personSourceId: userId, createdAt, path });
  }

  for (const [index, comment] of rowsOf(files, "comments.json", c).entries()) {
    const path = `comments.json[${index}]`;
    const postId = comment ? idOf(comment.post_id) : null;
    if (onDeletedPost(postId, "comments", path)) continue;
    if (comment === null || postId === null) {
      c.skip("comments", path, "a comment without post: skipped");
      continue;
    }
    if (comment.deleted_at !== null && comment.deleted_at !== undefined) {
      c.skip("comments", path, "a deleted comment: not imported");
      continue;
    }
    if (comment.is_approved === false) {
      c.skip("comments", path, "a comment awaiting moderation: not imported");
      continue;
    }
    const content = typeof comment.content === "string" ? comment.content.trim() : "";
    const createdAt = timeOf(comment.created_at);
    if (content === "" || createdAt === undefined) {
      c.skip("comments", path, content === "" ? "an empty comment: skipped" : "created_at is not a date: skipped");
      continue;
    }
    c.data.comments.push({
      sourceId: idOf(comment.id),
      featureSourceId: postId,
      parentSourceId: null,
      personSourceId: idOf(comment.user_id),
      content,
      createdAt,
      path,
    });
  }

  for (const [index, subscriber] of rowsOf(files, "post_subscribers.json", c).entries()) {
    const path = `post_subscribers.json[${index}]`;
    const postId = subscriber ? idOf(subscriber.post_id) : null;
    const userId = subscriber ? idOf(subscriber.user_id) : null;
    if (onDeletedPost(postId, "subscriptions", path)) continue;
    if (subscriber === null || postId === null || userId === null) {
      c.skip("subscriptions", path, "a subscription without post or user: skipped");
      continue;
    }
    c.data.subscriptions.push({ featureSourceId: postId, personSourceId: userId, active: subscriber.status !== 0, path });
  }
}

/** Fider's posts.csv columns the reader needs. */
const FIDER_CSV_REQUIRED = ["number", "title"] as const;

/**
 * Fider's posts.csv (import-formats.md §1a): features, responses and tags only. Posts are
 * `number:<n>` (the CSV has no post id), without authors (`created_by` is a name only), tags their slugs; the
 * `tags` cell is split on ", " exactly (how Fider joins it), so a comma inside a slug
 * (`this-tag-has,comma`) stays in it.
 */
export function readFiderCsv(bytes: Uint8Array, c: ImportCollector): void {
  const file = "posts.csv";
  const table = readCsvTable(bytes, file, FIDER_CSV_REQUIRED, c);
  c.warn(
    file,
    "Fider's posts.csv holds no people, votes or comments: only features, responses and tags are imported (no authors; tags by slug, private ones included as Fider exports them)",
  );
  const tags = new Set<string>();
  for (const { line, cells } of table.rows) {
    const path = `${file}:${line}`;
    const number = cells.number ?? "";
    const title = cells.title ?? "";
    if (!/^\d+$/.test(number) || title === "") {
      c.skip(
        "features",
        path,
        title === "" ? "a row without title: skipped" : `number ${JSON.stringify(number)} is not a post number: skipped`,
      );
      continue;
    }
    const status = cells.status || null;
    if (status === "deleted") {
      c.skip("features", path, `post ${number} is deleted in Fider: skipped`);
      continue;
    }
    let createdAt: string | null = null;
    if (cells.created_at) {
      createdAt = parseSourceDate(cells.created_at);
      if (createdAt === null) {
        c.skip("features", path, `created_at ${JSON.stringify(cells.created_at)} is not a date: skipped`);
        continue;
      }
    }
    const tagSourceIds: string[] = [];
    for (const slug of (cells.tags ?? "").split(", ").map((part) => part.trim())) {
      if (slug === "" || tagSourceIds.includes(slug)) continue;
      if (!tags.has(slug)) {
        tags.add(slug);
        c.data.tags.push({ sourceId: slug, name: slug, color: null, path });
      }
      tagSourceIds.push(slug);
    }
    const original = cells.original_number ?? "";
    c.data.features.push({
      sourceId: `number:${number}`,
      title,
      description: cells.description ?? "",
      status: status === "duplicate" ? null : status,
      boardSourceId: null,
      tagSourceIds,
      // No people: created_by is a display name only, and the contract imports features,
      // responses and tags from this file (imports-v3.md, "Sources", Fider).
      authorSourceId: null,
      createdAt,
      developerResponse: cells.response || null,
      responseIsDenial: status === "declined",
      targetDate: null,
      approved: true,
      mergedIntoSourceId: /^\d+$/.test(original) ? `number:${original}` : null,
      path,
    });
  }
}
