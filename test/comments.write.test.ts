/**
 * POST comments, DELETE comments/{cid} (contract, "Taking part" rules 3-5, CommentObject,
 * CommentDeletedObject): the written object, replies one level deep, content and parent_id
 * validation, settings and bans, deletion of one's own comment with its replies and the exact
 * features.comment_count, including concurrent writers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, createTestContext, type Ids, type ImportedProject, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
let p: ImportedProject;
let ids: Ids;
const ADA = "anon-ada-comments-write-01";
const BOB = "anon-bob-comments-write-01";
const BAN = "anon-ban-comments-write-01";
const ada = { "X-VF-Anon": ADA };
const bob = { "X-VF-Anon": BOB };

beforeAll(async () => {
  ctx = await createTestContext();
  p = await ctx.importProject({
    voters: [
      { ref: "ada", kind: "anonymous", anon_token: ADA, display_name: "Ada", role: "editor" },
      { ref: "bob", kind: "anonymous", anon_token: BOB, display_name: "Bob" },
      { ref: "ban", kind: "anonymous", anon_token: BAN, display_name: "Banned", banned: true },
    ],
    features: [
      { ref: "f1", board: "roadmap", column: "c-open", heading: "Dark mode" },
      { ref: "f2", board: "roadmap", column: "c-planned", heading: "Export" },
      { ref: "hidden", board: "roadmap", column: "c-open", heading: "Awaiting review", is_approved: false, author: "bob" },
    ],
    comments: [
      { ref: "top", feature: "f1", voter: "bob", content: "top level" },
      { ref: "reply", feature: "f1", voter: "ada", parent: "top", content: "a reply" },
      { ref: "other", feature: "f2", voter: "bob", content: "on another feature" },
    ],
  });
  ids = p.ids.ids;
});
afterAll(async () => {
  await ctx?.close();
});

const commentsPath = (feature: number) => `/api/v3/projects/${p.slug}/features/${feature}/comments`;
const post = async (feature: number, payload: unknown, headers: Record<string, string> = ada) => {
  const response = await ctx.send("POST", commentsPath(feature), p.secretKey, payload, headers);
  return { status: response.status, body: await response.json() };
};
const remove = async (cid: number, headers: Record<string, string> = ada, project = p) => {
  const response = await ctx.send("DELETE", `/api/v3/projects/${project.slug}/comments/${cid}`, project.secretKey, undefined, headers);
  return { status: response.status, body: await response.json() };
};
const commentCount = async (featureId: number) =>
  (await ctx.db.selectFrom("features").select("comment_count").where("id", "=", featureId).executeTakeFirstOrThrow()).comment_count;
const commentRows = async (featureId: number) =>
  Number(
    (
      await ctx.db
        .selectFrom("comments")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("feature_id", "=", featureId)
        .executeTakeFirstOrThrow()
    ).n,
  );

describe("POST comments", () => {
  it("writes a top-level comment verbatim and counts it", async () => {
    const before = await commentCount(ids.features.f1!);
    const content = "  Plain <b>text</b>\nkept as sent  ";
    const { status, body } = await post(ids.features.f1!, { content });
    expect(status).toBe(201);
    expect(body).toEqual({
      data: {
        id: expect.any(Number),
        feature_id: ids.features.f1!,
        parent_id: null,
        content,
        author_name: "Ada",
        author_role: "editor",
        created_at: expect.any(String),
        like_count: 0,
        has_liked: false,
        is_own: true,
        replies: [],
      },
      meta: null,
      error: null,
    });
    expect(new Date(body.data.created_at).toISOString()).toBe(body.data.created_at);
    expect(await commentCount(ids.features.f1!)).toBe(before + 1);
  });

  it("writes a reply under a top-level comment; the reply counts too and shows up in the thread", async () => {
    const before = await commentCount(ids.features.f1!);
    const { status, body } = await post(ids.features.f1!, { content: "me too", parent_id: ids.comments.top! }, bob);
    expect(status).toBe(201);
    expect(body.data).toMatchObject({ parent_id: ids.comments.top!, author_name: "Bob", author_role: null, is_own: true, replies: [] });
    expect(await commentCount(ids.features.f1!)).toBe(before + 1);
    const thread = (await (await ctx.get(`${commentsPath(ids.features.f1!)}?sort=oldest`, p.secretKey)).json()) as Answer<
      "/api/v3/projects/{slug}/features/{id}/comments",
      "get"
    >;
    const top = thread.data.find((c) => c.id === ids.comments.top!);
    expect(top?.replies.map((r) => r.id)).toEqual([ids.comments.reply!, body.data.id]);
  });

  it("accepts parent_id null as a top-level comment and exactly 2000 characters", async () => {
    const { status, body } = await post(ids.features.f1!, { content: "x".repeat(2000), parent_id: null });
    expect(status).toBe(201);
    expect(body.data.parent_id).toBeNull();
    expect(body.data.content).toHaveLength(2000);
  });

  it("answers 422 naming content for a missing, empty, blank, non-string or too long content", async () => {
    const before = await commentCount(ids.features.f1!);
    for (const payload of [{}, { content: "" }, { content: "  \n\t " }, { content: 42 }, { content: "y".repeat(2001) }]) {
      const { status, body } = await post(ids.features.f1!, payload);
      expect(status, JSON.stringify(payload).slice(0, 40)).toBe(422);
      expect(body).toEqual({ data: null, meta: null, error: { code: "validation_failed", field: "content", message: expect.any(String) } });
    }
    expect(await commentCount(ids.features.f1!)).toBe(before);
  });

  it("answers 422 naming parent_id for a reply, another feature's comment, an unknown id or a non-integer", async () => {
    const before = await commentCount(ids.features.f1!);
    for (const parent_id of [ids.comments.reply!, ids.comments.other!, 2147483647, "abc", 1.5, 0]) {
      const { status, body } = await post(ids.features.f1!, { content: "nested?", parent_id });
      expect(status, String(parent_id)).toBe(422);
      expect(body.error).toMatchObject({ code: "validation_failed", field: "parent_id" });
    }
    expect(await commentCount(ids.features.f1!)).toBe(before);
  });

  it("answers 422 for a body that is not JSON", async () => {
    const response = await ctx.send("POST", commentsPath(ids.features.f1!), p.secretKey, "{not json", { ...ada });
    expect(response.status).toBe(422);
    expect((await response.json()).error.code).toBe("validation_failed");
  });

  it("refuses a banned voter with 403 voter_banned", async () => {
    const { status, body } = await post(ids.features.f1!, { content: "let me in" }, { "X-VF-Anon": BAN });
    expect(status).toBe(403);
    expect(body.error).toMatchObject({ code: "voter_banned", field: null });
  });

  it("answers 404 for an unknown or hidden feature, and lets the author of a hidden suggestion comment on it", async () => {
    expect((await post(2147483647, { content: "hello" })).body.error.code).toBe("not_found");
    const hidden = await post(ids.features.hidden!, { content: "hello" });
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.code).toBe("not_found");
    const own = await post(ids.features.hidden!, { content: "my own suggestion" }, bob);
    expect(own.status).toBe(201);
  });

  it("keeps comment_count exact under concurrent comments", async () => {
    const before = await commentCount(ids.features.f2!);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => post(ids.features.f2!, { content: `parallel ${i}` }, i % 2 ? ada : bob)),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(await commentCount(ids.features.f2!)).toBe(before + 8);
    expect(await commentCount(ids.features.f2!)).toBe(await commentRows(ids.features.f2!));
  });
});

describe("DELETE comments/{cid}", () => {
  it("deletes one's own top-level comment with all its replies and reports the new count", async () => {
    const own = await post(ids.features.f2!, { content: "to delete" });
    await post(ids.features.f2!, { content: "reply one", parent_id: own.body.data.id }, bob);
    await post(ids.features.f2!, { content: "reply two", parent_id: own.body.data.id }, ada);
    const before = await commentCount(ids.features.f2!);
    const { status, body } = await remove(own.body.data.id);
    expect(status).toBe(200);
    expect(body).toEqual({ data: { deleted: true, feature_id: ids.features.f2!, comment_count: before - 3 }, meta: null, error: null });
    expect(await commentCount(ids.features.f2!)).toBe(before - 3);
    expect(await commentCount(ids.features.f2!)).toBe(await commentRows(ids.features.f2!));
    const left = await ctx.db.selectFrom("comments").select("id").where("parent_id", "=", own.body.data.id).execute();
    expect(left).toEqual([]);
  });

  it("deletes one's own reply only", async () => {
    const top = await post(ids.features.f2!, { content: "stays" }, bob);
    const reply = await post(ids.features.f2!, { content: "goes", parent_id: top.body.data.id });
    const before = await commentCount(ids.features.f2!);
    const { status, body } = await remove(reply.body.data.id);
    expect(status).toBe(200);
    expect(body.data).toEqual({ deleted: true, feature_id: ids.features.f2!, comment_count: before - 1 });
  });

  it("refuses another voter's comment with 403 not_allowed and keeps it", async () => {
    const before = await commentCount(ids.features.f1!);
    const { status, body } = await remove(ids.comments.top!, ada);
    expect(status).toBe(403);
    expect(body.error).toMatchObject({ code: "not_allowed", field: null });
    expect(await commentCount(ids.features.f1!)).toBe(before);
  });

  it("answers 404 for an unknown comment, an already deleted one and another project's", async () => {
    expect((await remove(2147483647)).status).toBe(404);
    const own = await post(ids.features.f1!, { content: "twice" });
    expect((await remove(own.body.data.id)).status).toBe(200);
    const again = await remove(own.body.data.id);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("not_found");
    const other = await ctx.importProject({
      voters: [{ ref: "ada", kind: "anonymous" }],
      features: [{ ref: "f", board: "roadmap", column: "c-open", heading: "Elsewhere" }],
      comments: [{ ref: "c", feature: "f", voter: "ada", content: "foreign" }],
    });
    expect((await remove(other.ids.ids.comments.c!)).body.error.code).toBe("not_found");
  });

  it("decrements exactly once when the same comment is deleted concurrently", async () => {
    const top = await post(ids.features.f2!, { content: "race" });
    await post(ids.features.f2!, { content: "race reply", parent_id: top.body.data.id }, bob);
    const before = await commentCount(ids.features.f2!);
    const results = await Promise.all(Array.from({ length: 4 }, () => remove(top.body.data.id)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 404, 404, 404]);
    expect(await commentCount(ids.features.f2!)).toBe(before - 2);
    expect(await commentCount(ids.features.f2!)).toBe(await commentRows(ids.features.f2!));
  });

  it("keeps comment_count exact when replies race the deletion of their parent", async () => {
    const top = await post(ids.features.f2!, { content: "parent under fire" });
    const parentId = top.body.data.id;
    const replies = Array.from({ length: 5 }, (_, i) => post(ids.features.f2!, { content: `racing reply ${i}`, parent_id: parentId }, bob));
    const [deleted, ...written] = await Promise.all([remove(parentId), ...replies]);
    expect(deleted!.status).toBe(200);
    for (const reply of written) {
      // Each reply either landed before the delete (and went with it) or found its parent gone.
      expect([201, 422]).toContain(reply.status);
      if (reply.status === 422) expect(reply.body.error.field).toBe("parent_id");
    }
    expect(await commentCount(ids.features.f2!)).toBe(await commentRows(ids.features.f2!));
    const orphans = await ctx.db.selectFrom("comments").select("id").where("parent_id", "=", parentId).execute();
    expect(orphans).toEqual([]);
  });

  it("is refused with 422 for a non-numeric comment id", async () => {
    const response = await ctx.send("DELETE", `/api/v3/projects/${p.slug}/comments/abc`, p.secretKey, undefined, ada);
    expect(response.status).toBe(422);
    expect((await response.json()).error).toMatchObject({ code: "validation_failed", field: "cid" });
  });
});

describe("settings close the comment routes", () => {
  const TOKEN = "anon-settings-comments-01";
  it("show_comments false: 403 not_allowed on read, write, delete and like", async () => {
    const token = `${TOKEN}-hidden`;
    const closed = await ctx.importProject({
      project: { settings: { show_comments: false } },
      voters: [{ ref: "v", kind: "anonymous", anon_token: token }],
      features: [{ ref: "f", board: "roadmap", column: "c-open", heading: "Gated" }],
      comments: [{ ref: "c", feature: "f", voter: "v", content: "existing" }],
    });
    const h = { "X-VF-Anon": token };
    const base = `/api/v3/projects/${closed.slug}`;
    const responses = [
      await ctx.get(`${base}/features/${closed.ids.ids.features.f!}/comments`, closed.secretKey, h),
      await ctx.send("POST", `${base}/features/${closed.ids.ids.features.f!}/comments`, closed.secretKey, { content: "hi" }, h),
      await ctx.send("DELETE", `${base}/comments/${closed.ids.ids.comments.c!}`, closed.secretKey, undefined, h),
      await ctx.send("POST", `${base}/comments/${closed.ids.ids.comments.c!}/like`, closed.secretKey, undefined, h),
    ];
    for (const response of responses) {
      expect(response.status).toBe(403);
      expect((await response.json()).error).toMatchObject({ code: "not_allowed", field: null });
    }
    const rows = await ctx.db.selectFrom("comments").select("id").where("feature_id", "=", closed.ids.ids.features.f!).execute();
    expect(rows).toHaveLength(1);
  });

  it("allow_comments false: 403 not_allowed on write, while reading, deleting one's own and liking still work", async () => {
    const token = `${TOKEN}-nowrite`;
    const closed = await ctx.importProject({
      project: { settings: { allow_comments: false } },
      voters: [{ ref: "v", kind: "anonymous", anon_token: token }],
      features: [{ ref: "f", board: "roadmap", column: "c-open", heading: "Gated" }],
      comments: [
        { ref: "c", feature: "f", voter: "v", content: "existing" },
        { ref: "d", feature: "f", voter: "v", content: "second" },
      ],
    });
    const h = { "X-VF-Anon": token };
    const base = `/api/v3/projects/${closed.slug}`;
    const write = await ctx.send("POST", `${base}/features/${closed.ids.ids.features.f!}/comments`, closed.secretKey, { content: "hi" }, h);
    expect(write.status).toBe(403);
    expect((await write.json()).error.code).toBe("not_allowed");
    expect((await ctx.get(`${base}/features/${closed.ids.ids.features.f!}/comments`, closed.secretKey, h)).status).toBe(200);
    expect((await ctx.send("POST", `${base}/comments/${closed.ids.ids.comments.c!}/like`, closed.secretKey, undefined, h)).status).toBe(
      200,
    );
    const del = await ctx.send("DELETE", `${base}/comments/${closed.ids.ids.comments.d!}`, closed.secretKey, undefined, h);
    expect(del.status).toBe(200);
    expect((await del.json()).data).toEqual({ deleted: true, feature_id: closed.ids.ids.features.f!, comment_count: 1 });
  });
});
