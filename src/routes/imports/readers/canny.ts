/**
 * Canny: a zip of the API's list answers saved as returned (imports-v3.md, "Sources", Canny;
 * the fields: import-formats.md §2). `boards.json` and `posts.json` are required; `votes.json`,
 * `comments.json` (v1 `{comments, hasMore}` or v2 `{items, cursor, hasNextPage}`), `tags.json`,
 * `categories.json`, `entries.json`, `users.json` (v1 bare array or v2 `{users, ...}`) and
 * `companies.json` are read when present. People come from `users.json` and from every embedded
 * author, voter and comment author, one per Canny user id.
 */
import type { ImportFeature } from "../import-data.ts";
import { ImportFileError } from "../import-data.ts";
import type { ImportCollector } from "./collector.ts";
import { parseEta, parseSourceDate } from "./dates.ts";
import { idOf, isRecord, parseJsonFile, text } from "./files.ts";

/** The entries of a Canny zip the reader reads (base names). */
export const CANNY_FILES = new Set([
  "boards.json",
  "posts.json",
  "votes.json",
  "comments.json",
  "tags.json",
  "categories.json",
  "entries.json",
  "users.json",
  "companies.json",
]);

/** The list inside a saved answer: `{<key>: [...]}`, v2 `{items: [...]}`, or a bare array (v1 users). */
function listOf(files: Map<string, Uint8Array>, file: string, key: string, collector: ImportCollector): unknown[] | null {
  const bytes = files.get(file);
  if (bytes === undefined) return null;
  const answer = parseJsonFile(bytes, file);
  let list: unknown;
  if (Array.isArray(answer)) list = answer;
  else if (isRecord(answer)) list = Array.isArray(answer[key]) ? answer[key] : answer.items;
  if (!Array.isArray(list)) throw new ImportFileError(`${file}: not a Canny list answer (no "${key}" list)`);
  collector.countRecords(file, list.length);
  return list;
}

/** A time field: RFC 3339 UTC, null when absent; `undefined` when present but not a date. */
function timeOf(value: unknown): string | null | undefined {
  if (value === null || value === undefined || value === "") return null;
  if (typeof value !== "string") return undefined;
  return parseSourceDate(value) ?? undefined;
}

export function readCanny(files: Map<string, Uint8Array>, c: ImportCollector): void {
  for (const required of ["boards.json", "posts.json"]) {
    if (!files.has(required))
      throw new ImportFileError(`${required}: missing from the zip (a Canny import needs boards.json and posts.json)`);
  }
  const companyNames = new Map<string, string>();
  for (const [index, company] of (listOf(files, "companies.json", "companies", c) ?? []).entries()) {
    const id = isRecord(company) ? idOf(company.id) : null;
    const name = isRecord(company) ? text(company.name) : null;
    if (id !== null && name !== null) companyNames.set(id, name);
    else c.warn(`companies.json[${index}]`, "a company without id or name: not used");
  }

  /** The person behind an embedded or listed user; null when it has no id. */
  const person = (user: unknown, path: string): string | null => {
    if (!isRecord(user)) return null;
    const id = idOf(user.id);
    if (id === null) return null;
    let company: string | null = null;
    if (Array.isArray(user.companies)) {
      const first = user.companies.find(isRecord);
      if (first) company = text(first.name) ?? companyNames.get(idOf(first.id) ?? "") ?? null;
    }
    c.addPerson({
      sourceId: id,
      ssoId: idOf(user.userID),
      name: text(user.name),
      email: text(user.email),
      role: user.isAdmin === true ? "editor" : "voter",
      company,
      deleted: false,
      path,
    });
    return id;
  };

  for (const [index, user] of (listOf(files, "users.json", "users", c) ?? []).entries()) {
    if (person(user, `users.json[${index}]`) === null) c.skip("voters", `users.json[${index}]`, "a user without id: skipped");
  }

  const boardIds = new Set<string>();
  const addBoard = (board: unknown, path: string): string | null => {
    if (!isRecord(board)) return null;
    const id = idOf(board.id);
    const name = text(board.name);
    if (id === null || name === null) return null;
    if (!boardIds.has(id)) {
      boardIds.add(id);
      c.data.boards.push({ sourceId: id, name, path });
    }
    return id;
  };
  for (const [index, board] of (listOf(files, "boards.json", "boards", c) ?? []).entries()) {
    if (addBoard(board, `boards.json[${index}]`) === null) c.skip("boards", `boards.json[${index}]`, "a board without id or name: skipped");
  }

  const tagIds = new Set<string>();
  const addTag = (tag: unknown, path: string): string | null => {
    if (!isRecord(tag)) return null;
    const id = idOf(tag.id);
    const name = text(tag.name);
    if (id === null || name === null) return null;
    if (!tagIds.has(id)) {
      tagIds.add(id);
      c.data.tags.push({ sourceId: id, name, color: null, path });
    }
    return id;
  };
  for (const [file, key] of [
    ["tags.json", "tags"],
    ["categories.json", "categories"],
  ] as const) {
    for (const [index, tag] of (listOf(files, file, key, c) ?? []).entries()) {
      if (addTag(tag, `${file}[${index}]`) === null)
        c.skip("tags", `${file}[${index}]`, `a ${key === "tags" ? "tag" : "category"} without id or name: skipped`);
    }
  }

  const description = (details: unknown, imageURLs: unknown): string => {
    const urls = Array.isArray(imageURLs) ? imageURLs.map(text).filter((url): url is string => url !== null) : [];
    const body = typeof details === "string" ? details.trim() : "";
    if (urls.length === 0) return body;
    return body === "" ? urls.join("\n") : `${body}\n\n${urls.join("\n")}`;
  };

  const features = new Map<string, ImportFeature>();
  const merges: Array<{ entry: Record<string, unknown>; into: ImportFeature; path: string }> = [];
  for (const [index, post] of (listOf(files, "posts.json", "posts", c) ?? []).entries()) {
    const path = `posts.json[${index}]`;
    const id = isRecord(post) ? idOf(post.id) : null;
    const title = isRecord(post) ? text(post.title) : null;
    if (!isRecord(post) || id === null || title === null) {
      c.skip("features", path, "a post without id or title: skipped");
      continue;
    }
    if (features.has(id)) {
      c.skip("features", path, `post ${id} is listed twice: the first is kept`);
      continue;
    }
    const createdAt = timeOf(post.created);
    if (createdAt === undefined) {
      c.skip("features", path, `created ${JSON.stringify(post.created)} is not a date: skipped`);
      continue;
    }
    let targetDate: string | null = null;
    if (post.eta !== null && post.eta !== undefined && post.eta !== "") {
      targetDate = typeof post.eta === "string" ? parseEta(post.eta) : null;
      if (targetDate === null) c.warn(path, `eta ${JSON.stringify(post.eta)} is neither MM/YYYY nor a date: no target date`);
    }
    const tagSourceIds: string[] = [];
    for (const [tagIndex, tag] of (Array.isArray(post.tags) ? post.tags : []).entries()) {
      const tagId = addTag(tag, `${path}.tags[${tagIndex}]`);
      if (tagId !== null && !tagSourceIds.includes(tagId)) tagSourceIds.push(tagId);
    }
    // Categories become tags (imports-v3.md, "Sources", Canny).
    const categoryId = post.category ? addTag(post.category, `${path}.category`) : null;
    if (categoryId !== null && !tagSourceIds.includes(categoryId)) tagSourceIds.push(categoryId);
    const feature: ImportFeature = {
      sourceId: id,
      title,
      description: description(post.details, post.imageURLs),
      status: text(post.status),
      boardSourceId: addBoard(post.board, `${path}.board`),
      tagSourceIds,
      authorSourceId: person(post.author, `${path}.author`),
      createdAt,
      developerResponse: null,
      responseIsDenial: false,
      targetDate,
      approved: true,
      mergedIntoSourceId: null,
      path,
    };
    features.set(id, feature);
    c.data.features.push(feature);
    for (const [entryIndex, entry] of (Array.isArray(post.mergeHistory) ? post.mergeHistory : []).entries()) {
      if (isRecord(entry)) merges.push({ entry, into: feature, path: `${path}.mergeHistory[${entryIndex}]` });
    }
  }

  // mergeHistory lists the posts merged into a post; one absent from posts.json is made from the entry's `post`.
  for (const { entry, into, path } of merges) {
    const merged = isRecord(entry.post) ? entry.post : null;
    const mergedId = merged ? idOf(merged.id) : null;
    if (merged === null || mergedId === null) {
      c.skip("merges", path, "a merge without the merged post's id: skipped");
      continue;
    }
    if (mergedId === into.sourceId) continue;
    const known = features.get(mergedId);
    if (known !== undefined) {
      if (known.mergedIntoSourceId !== null && known.mergedIntoSourceId !== into.sourceId) {
        c.skip("merges", path, `post ${mergedId} is already merged into ${known.mergedIntoSourceId}: this merge is skipped`);
      } else {
        known.mergedIntoSourceId = into.sourceId;
      }
      continue;
    }
    const title = text(merged.title);
    const createdAt = timeOf(merged.created);
    if (title === null || createdAt === undefined) {
      c.skip(
        "features",
        path,
        `merged post ${mergedId} is not in posts.json and its entry has no ${title === null ? "title" : "valid created date"}: skipped`,
      );
      continue;
    }
    const feature: ImportFeature = {
      sourceId: mergedId,
      title,
      description: description(merged.details, merged.imageURLs),
      status: text(merged.status),
      boardSourceId: into.boardSourceId,
      tagSourceIds: [],
      authorSourceId: null,
      createdAt,
      developerResponse: null,
      responseIsDenial: false,
      targetDate: null,
      approved: true,
      mergedIntoSourceId: into.sourceId,
      path,
    };
    features.set(mergedId, feature);
    c.data.features.push(feature);
  }

  for (const [index, vote] of (listOf(files, "votes.json", "votes", c) ?? []).entries()) {
    const path = `votes.json[${index}]`;
    const postId = isRecord(vote) && isRecord(vote.post) ? idOf(vote.post.id) : null;
    const voterId = isRecord(vote) ? person(vote.voter, `${path}.voter`) : null;
    if (!isRecord(vote) || postId === null || voterId === null) {
      c.skip("votes", path, "a vote without post or voter: skipped");
      continue;
    }
    const createdAt = timeOf(vote.created);
    if (createdAt === undefined) {
      c.skip("votes", path, `created ${JSON.stringify(vote.created)} is not a date: skipped`);
      continue;
    }
    c.data.votes.push({ featureSourceId: postId, personSourceId: voterId, createdAt, path });
  }

  for (const [index, comment] of (listOf(files, "comments.json", "comments", c) ?? []).entries()) {
    const path = `comments.json[${index}]`;
    const postId = isRecord(comment) && isRecord(comment.post) ? idOf(comment.post.id) : null;
    if (!isRecord(comment) || postId === null) {
      c.skip("comments", path, "a comment without post: skipped");
      continue;
    }
    if (comment.internal === true || comment.private === true) {
      c.skip(
        "comments",
        path,
        `${comment.internal === true ? "an internal" : "a private"} comment: not imported (kept from the public in Canny)`,
      );
      continue;
    }
    const content = description(comment.value, comment.imageURLs);
    if (content === "") {
      c.skip("comments", path, "an empty comment: skipped");
      continue;
    }
    const createdAt = timeOf(comment.created);
    if (createdAt === undefined) {
      c.skip("comments", path, `created ${JSON.stringify(comment.created)} is not a date: skipped`);
      continue;
    }
    c.data.comments.push({
      sourceId: idOf(comment.id),
      featureSourceId: postId,
      parentSourceId: idOf(comment.parentID),
      personSourceId: person(comment.author, `${path}.author`),
      content,
      createdAt,
      path,
    });
  }

  const types = { new: "new", improved: "improvement", fixed: "fix" } as const;
  for (const [index, entry] of (listOf(files, "entries.json", "entries", c) ?? []).entries()) {
    const path = `entries.json[${index}]`;
    const id = isRecord(entry) ? idOf(entry.id) : null;
    const name = isRecord(entry) ? text(entry.title) : null;
    if (!isRecord(entry) || id === null || name === null) {
      c.skip("releases", path, "a changelog entry without id or title: skipped");
      continue;
    }
    const draft = entry.status === "draft";
    const publishedAt = draft ? null : timeOf(entry.publishedAt);
    const scheduledFor = draft ? null : timeOf(entry.scheduledFor);
    if (publishedAt === undefined || scheduledFor === undefined) {
      c.skip("releases", path, `${publishedAt === undefined ? "publishedAt" : "scheduledFor"} is not a date: skipped`);
      continue;
    }
    const firstType = Array.isArray(entry.types) ? entry.types[0] : undefined;
    const changelogType = typeof firstType === "string" && Object.hasOwn(types, firstType) ? types[firstType as keyof typeof types] : null;
    if (firstType !== undefined && changelogType === null)
      c.warn(path, `type ${JSON.stringify(firstType)} is not new, improved or fixed: no changelog type`);
    const featureSourceIds: string[] = [];
    for (const post of Array.isArray(entry.posts) ? entry.posts : []) {
      const postId = isRecord(post) ? idOf(post.id) : null;
      if (postId !== null && !featureSourceIds.includes(postId)) featureSourceIds.push(postId);
    }
    const body =
      typeof entry.markdownDetails === "string"
        ? entry.markdownDetails
        : typeof entry.plaintextDetails === "string"
          ? entry.plaintextDetails
          : "";
    c.data.releases.push({ sourceId: id, name, body, publishedAt, scheduledFor, changelogType, featureSourceIds, path });
  }
}
