/**
 * GET /projects/{slug}/features/{id}/comments (contract, "Reading a board" and CommentObject):
 * every field, threading, sort orders, pagination over top-level comments only, has_liked and
 * is_own, visibility of the feature, query validation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Answer,
  createTestContext,
  type ErrorAnswer,
  type Ids,
  type ImportedProject,
  body as parse,
  type TestContext,
} from "./support/harness.ts";

type Comments = Answer<"/api/v3/projects/{slug}/features/{id}/comments", "get">;

let ctx: TestContext;
let p: ImportedProject;
let ids: Ids;
const ADA = "anon-ada-comments-read-0001";
const DEE = "anon-dee-comments-read-0001";

const voters = [
  { ref: "ada", kind: "anonymous", anon_token: ADA, display_name: "Ada", role: "owner" },
  { ref: "bob", kind: "anonymous", display_name: "Bob", role: "editor" },
  { ref: "cy", kind: "anonymous", display_name: "Cy", role: "viewer" },
  { ref: "dee", kind: "anonymous", anon_token: DEE, display_name: "Dee" },
];
const at = (day: number) => `2026-01-0${day}T10:00:00.000Z`;

beforeAll(async () => {
  ctx = await createTestContext();
  p = await ctx.importProject({
    voters,
    features: [
      { ref: "f1", board: "roadmap", column: "c-open", heading: "Dark mode" },
      { ref: "f2", board: "roadmap", column: "c-planned", heading: "Export" },
      { ref: "hidden", board: "roadmap", column: "c-open", heading: "Awaiting review", is_approved: false, author: "dee" },
    ],
    comments: [
      { ref: "t1", feature: "f1", voter: "ada", content: "first", created_at: at(1) },
      { ref: "t2", feature: "f1", voter: "bob", content: "second", created_at: at(2) },
      { ref: "t3", feature: "f1", voter: "cy", content: "third", created_at: at(3) },
      { ref: "t4", feature: "f1", voter: "dee", content: "fourth", created_at: at(4) },
      { ref: "r1", feature: "f1", voter: "bob", parent: "t1", content: "reply late", created_at: at(5) },
      { ref: "r2", feature: "f1", voter: "ada", parent: "t1", content: "reply early", created_at: at(3) },
      { ref: "r3", feature: "f1", voter: "dee", parent: "t3", content: "reply to third", created_at: at(6) },
      { ref: "o1", feature: "f2", voter: "ada", content: "other feature", created_at: at(1) },
      { ref: "h1", feature: "hidden", voter: "dee", content: "on hidden", created_at: at(1) },
    ],
    likes: [
      { voter: "ada", comment: "t2" },
      { voter: "bob", comment: "t2" },
      { voter: "cy", comment: "t2" },
      { voter: "bob", comment: "t4" },
      { voter: "cy", comment: "t4" },
      { voter: "ada", comment: "t3" },
      { voter: "dee", comment: "t3" },
      { voter: "ada", comment: "r1" },
    ],
  });
  ids = p.ids.ids;
});
afterAll(async () => {
  await ctx?.close();
});

const path = (feature: number, query = "") => `/api/v3/projects/${p.slug}/features/${feature}/comments${query}`;
/** One page of comments; `T` names the answer expected (an error envelope for refusals). */
const list = async <T = Comments>(query = "", headers: Record<string, string> = {}, feature = ids.features.f1!) => {
  const response = await ctx.get(path(feature, query), p.secretKey, headers);
  return { status: response.status, body: await parse<T>(response), response };
};

describe("GET comments: objects", () => {
  it("returns every field of top-level comments and replies, as seen by their author", async () => {
    const { status, body } = await list("?sort=oldest", { "X-VF-Anon": ADA });
    expect(status).toBe(200);
    expect(body.error).toBeNull();
    expect(body.data.map((c) => c.id)).toEqual([ids.comments.t1, ids.comments.t2, ids.comments.t3, ids.comments.t4]);
    const [t1, t2, t3, t4] = body.data;
    expect(t1).toEqual({
      id: ids.comments.t1,
      feature_id: ids.features.f1,
      parent_id: null,
      content: "first",
      author_name: "Ada",
      author_role: "owner",
      created_at: at(1),
      like_count: 0,
      has_liked: false,
      is_own: true,
      replies: [
        {
          id: ids.comments.r2,
          feature_id: ids.features.f1,
          parent_id: ids.comments.t1,
          content: "reply early",
          author_name: "Ada",
          author_role: "owner",
          created_at: at(3),
          like_count: 0,
          has_liked: false,
          is_own: true,
          replies: [],
        },
        {
          id: ids.comments.r1,
          feature_id: ids.features.f1,
          parent_id: ids.comments.t1,
          content: "reply late",
          author_name: "Bob",
          author_role: "editor",
          created_at: at(5),
          like_count: 1,
          has_liked: true,
          is_own: false,
          replies: [],
        },
      ],
    });
    expect(t2).toMatchObject({ author_name: "Bob", author_role: "editor", like_count: 3, has_liked: true, is_own: false, replies: [] });
    // A read-only member (viewer) and a plain voter both report a null role.
    expect(t3).toMatchObject({ author_name: "Cy", author_role: null, like_count: 2, has_liked: true, is_own: false });
    expect(t3!.replies.map((r) => r.id)).toEqual([ids.comments.r3]);
    expect(t4).toMatchObject({ author_name: "Dee", author_role: null, like_count: 2, has_liked: false, is_own: false });
  });

  it("reports has_liked and is_own false without an identity", async () => {
    const { status, body } = await list("?sort=oldest");
    expect(status).toBe(200);
    const all = body.data.flatMap((c) => [c, ...c.replies]);
    expect(all).toHaveLength(7);
    for (const comment of all) {
      expect(comment.has_liked).toBe(false);
      expect(comment.is_own).toBe(false);
    }
  });

  it("lists only the addressed feature's comments", async () => {
    const { body } = await list("", {}, ids.features.f2);
    expect(body.data.map((c) => c.content)).toEqual(["other feature"]);
    expect(body.meta.total).toBe(1);
  });

  it("answers an ETag and 304 when it still matches", async () => {
    const first = await list();
    const etag = first.response.headers.get("ETag");
    expect(etag).toBeTruthy();
    const again = await ctx.get(path(ids.features.f1!), p.secretKey, { "If-None-Match": etag! });
    expect(again.status).toBe(304);
  });
});

describe("GET comments: order and pages", () => {
  it("sorts newest first by default, oldest first on request, and by likes then newest for top", async () => {
    const order = async (query: string) => (await list(query)).body.data.map((c) => c.content);
    expect(await order("")).toEqual(["fourth", "third", "second", "first"]);
    expect(await order("?sort=newest")).toEqual(["fourth", "third", "second", "first"]);
    expect(await order("?sort=oldest")).toEqual(["first", "second", "third", "fourth"]);
    // t2 has 3 likes; t4 and t3 tie on 2 (newer first); t1 has none.
    expect(await order("?sort=top")).toEqual(["second", "fourth", "third", "first"]);
  });

  it("keeps replies oldest first whatever the sort", async () => {
    for (const sort of ["newest", "oldest", "top"]) {
      const { body } = await list(`?sort=${sort}`);
      const t1 = body.data.find((c) => c.id === ids.comments.t1);
      expect(t1!.replies.map((r) => r.content)).toEqual(["reply early", "reply late"]);
    }
  });

  it("pages over top-level comments only and returns every reply of a returned comment", async () => {
    const one = await list("?sort=oldest&per_page=3&page=1");
    expect(one.body.data.map((c) => c.content)).toEqual(["first", "second", "third"]);
    expect(one.body.meta).toEqual({ page: 1, per_page: 3, total: 4, total_pages: 2, has_more: true });
    expect(one.body.data[0]!.replies).toHaveLength(2);
    const two = await list("?sort=oldest&per_page=3&page=2");
    expect(two.body.data.map((c) => c.content)).toEqual(["fourth"]);
    expect(two.body.meta).toEqual({ page: 2, per_page: 3, total: 4, total_pages: 2, has_more: false });
    const past = await list("?sort=oldest&per_page=3&page=3");
    expect(past.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.meta).toEqual({ page: 3, per_page: 3, total: 4, total_pages: 2, has_more: false });
  });

  it("does not count replies against per_page=1", async () => {
    const { body } = await list("?sort=oldest&per_page=1");
    expect(body.data).toHaveLength(1);
    expect(body.data[0]!.replies).toHaveLength(2);
    expect(body.meta).toEqual({ page: 1, per_page: 1, total: 4, total_pages: 4, has_more: true });
  });

  it("uses per_page 20 by default", async () => {
    const { body } = await list();
    expect(body.meta).toEqual({ page: 1, per_page: 20, total: 4, total_pages: 1, has_more: false });
  });

  it("answers an empty first page for a feature without comments", async () => {
    const extra = await ctx.importProject({ features: [{ ref: "quiet", board: "roadmap", column: "c-open", heading: "Quiet" }] });
    const response = await ctx.get(`/api/v3/projects/${extra.slug}/features/${extra.ids.ids.features.quiet}/comments`, extra.secretKey);
    const body = await parse<Comments>(response);
    expect(response.status).toBe(200);
    expect(body).toEqual({ data: [], meta: { page: 1, per_page: 20, total: 0, total_pages: 0, has_more: false }, error: null });
  });
});

describe("GET comments: refusals", () => {
  it("answers 404 for a hidden feature except to its author", async () => {
    const hidden = ids.features.hidden;
    for (const headers of [{}, { "X-VF-Anon": ADA }] as Record<string, string>[]) {
      const { status, body } = await list<ErrorAnswer>("", headers, hidden);
      expect(status).toBe(404);
      expect(body).toEqual({ data: null, meta: null, error: { code: "not_found", field: null, message: expect.any(String) } });
    }
    const { status, body } = await list("", { "X-VF-Anon": DEE }, hidden);
    expect(status).toBe(200);
    expect(body.data.map((c) => c.content)).toEqual(["on hidden"]);
  });

  it("answers 404 for an unknown feature and for another project's feature", async () => {
    expect((await list<ErrorAnswer>("", {}, 2147483647)).body.error.code).toBe("not_found");
    const other = await ctx.importProject({ features: [{ ref: "x", board: "roadmap", column: "c-open", heading: "Elsewhere" }] });
    const { status, body } = await list<ErrorAnswer>("", {}, other.ids.ids.features.x);
    expect(status).toBe(404);
    expect(body.error.code).toBe("not_found");
  });

  it("answers 422 naming the parameter for a bad sort, page, per_page or id", async () => {
    for (const [query, field] of [
      ["?sort=best", "sort"],
      ["?page=0", "page"],
      ["?per_page=101", "per_page"],
      ["?per_page=0", "per_page"],
    ]) {
      const { status, body } = await list<ErrorAnswer>(query!);
      expect(status, query).toBe(422);
      expect(body.error).toMatchObject({ code: "validation_failed", field });
    }
    const response = await ctx.get(`/api/v3/projects/${p.slug}/features/abc/comments`, p.secretKey);
    expect(response.status).toBe(422);
    expect((await parse<ErrorAnswer>(response)).error).toMatchObject({ code: "validation_failed", field: "id" });
  });

  it("is closed with 403 not_allowed when the project does not show comments", async () => {
    const closed = await ctx.importProject({
      project: { settings: { show_comments: false } },
      voters: [{ ref: "v", kind: "anonymous" }],
      features: [{ ref: "f", board: "roadmap", column: "c-open", heading: "Closed" }],
      comments: [{ ref: "c", feature: "f", voter: "v", content: "hidden text" }],
    });
    const response = await ctx.get(`/api/v3/projects/${closed.slug}/features/${closed.ids.ids.features.f}/comments`, closed.secretKey);
    expect(response.status).toBe(403);
    expect((await parse<ErrorAnswer>(response)).error).toMatchObject({ code: "not_allowed", field: null });
  });
});
