/**
 * POST /projects/{slug}/comments/{cid}/like (contract, LikeObject; "Taking part" rule 4): the
 * toggle, banned voters may like, allow_likes, hidden and unknown comments, and like_count equal
 * to the like rows under concurrent toggles.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, body, createTestContext, type Ids, type ImportedProject, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
let p: ImportedProject;
let ids: Ids;
const token = (name: string) => `anon-${name}-comments-likes-01`;
const crowd = Array.from({ length: 8 }, (_, i) => `crowd${i}`);

beforeAll(async () => {
  ctx = await createTestContext();
  p = await ctx.importProject({
    voters: [...["ada", "bob", "ban", ...crowd].map((ref) => ({ ref, kind: "anonymous", anon_token: token(ref), banned: ref === "ban" }))],
    features: [
      { ref: "f1", board: "roadmap", column: "c-open", heading: "Dark mode" },
      { ref: "hidden", board: "roadmap", column: "c-open", heading: "Awaiting review", is_approved: false, author: "bob" },
    ],
    comments: [
      { ref: "c1", feature: "f1", voter: "bob", content: "like me" },
      { ref: "c2", feature: "f1", voter: "bob", content: "crowd target" },
      { ref: "c3", feature: "f1", voter: "bob", content: "toggle storm" },
      { ref: "r1", feature: "f1", voter: "bob", parent: "c1", content: "a reply" },
      { ref: "h1", feature: "hidden", voter: "bob", content: "on hidden" },
    ],
    likes: [{ voter: "bob", comment: "c1" }],
  });
  ids = p.ids.ids;
});
afterAll(async () => {
  await ctx?.close();
});

const like = async (cid: number, voter: string, project = p) => {
  const response = await ctx.send("POST", `/api/v3/projects/${project.slug}/comments/${cid}/like`, project.secretKey, undefined, {
    "X-VF-Anon": token(voter),
  });
  return { status: response.status, body: await response.json() };
};
const counts = async (cid: number) => {
  const row = await ctx.db.selectFrom("comments").select("like_count").where("id", "=", cid).executeTakeFirstOrThrow();
  const likes = await ctx.db.selectFrom("comment_likes").select("voter_id").where("comment_id", "=", cid).execute();
  return { likeCount: row.like_count, rows: likes.length };
};

describe("POST comments/{cid}/like", () => {
  it("toggles: like, then unlike, each answering the new state and count", async () => {
    const first = await like(ids.comments.c1!, "ada");
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ data: { comment_id: ids.comments.c1!, has_liked: true, like_count: 2 }, meta: null, error: null });
    const list = await ctx.get(`/api/v3/projects/${p.slug}/features/${ids.features.f1!}/comments`, p.secretKey, {
      "X-VF-Anon": token("ada"),
    });
    const c1 = (await body<Answer<"/api/v3/projects/{slug}/features/{id}/comments", "get">>(list)).data.find(
      (c) => c.id === ids.comments.c1!,
    );
    expect(c1).toMatchObject({ has_liked: true, like_count: 2 });
    const second = await like(ids.comments.c1!, "ada");
    expect(second.body.data).toEqual({ comment_id: ids.comments.c1!, has_liked: false, like_count: 1 });
    expect(await counts(ids.comments.c1!)).toEqual({ likeCount: 1, rows: 1 });
  });

  it("likes a reply", async () => {
    const { status, body } = await like(ids.comments.r1!, "ada");
    expect(status).toBe(200);
    expect(body.data).toEqual({ comment_id: ids.comments.r1!, has_liked: true, like_count: 1 });
  });

  it("lets a banned voter like", async () => {
    const { status, body } = await like(ids.comments.c1!, "ban");
    expect(status).toBe(200);
    expect(body.data.has_liked).toBe(true);
    await like(ids.comments.c1!, "ban");
  });

  it("answers 404 for an unknown comment, another project's and one on a hidden feature", async () => {
    expect((await like(2147483647, "ada")).body.error.code).toBe("not_found");
    const hidden = await like(ids.comments.h1!, "ada");
    expect(hidden.status).toBe(404);
    expect(hidden.body.error).toMatchObject({ code: "not_found", field: null });
    // The hidden suggestion's author still sees it, so may like comments on it.
    expect((await like(ids.comments.h1!, "bob")).status).toBe(200);
    const other = await ctx.importProject({
      voters: [{ ref: "x", kind: "anonymous" }],
      features: [{ ref: "f", board: "roadmap", column: "c-open", heading: "Elsewhere" }],
      comments: [{ ref: "c", feature: "f", voter: "x", content: "foreign" }],
    });
    const foreign = await like(other.ids.ids.comments.c!, "ada");
    expect(foreign.status).toBe(404);
    expect(await counts(other.ids.ids.comments.c!)).toEqual({ likeCount: 0, rows: 0 });
  });

  it("answers 403 not_allowed when the project does not accept likes", async () => {
    const closed = await ctx.importProject({
      project: { settings: { allow_likes: false } },
      voters: [{ ref: "v", kind: "anonymous", anon_token: "anon-nolikes-comments-likes-01" }],
      features: [{ ref: "f", board: "roadmap", column: "c-open", heading: "No likes" }],
      comments: [{ ref: "c", feature: "f", voter: "v", content: "unlikeable" }],
    });
    const response = await ctx.send(
      "POST",
      `/api/v3/projects/${closed.slug}/comments/${closed.ids.ids.comments.c!}/like`,
      closed.secretKey,
      undefined,
      {
        "X-VF-Anon": "anon-nolikes-comments-likes-01",
      },
    );
    expect(response.status).toBe(403);
    expect((await response.json()).error).toMatchObject({ code: "not_allowed", field: null });
  });

  it("counts every like exactly when many voters like at once", async () => {
    const results = await Promise.all(crowd.map((voter) => like(ids.comments.c2!, voter)));
    expect(results.every((r) => r.status === 200 && r.body.data.has_liked === true)).toBe(true);
    expect(results.map((r) => r.body.data.like_count).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(await counts(ids.comments.c2!)).toEqual({ likeCount: 8, rows: 8 });
  });

  it("keeps like_count equal to the like rows when one voter toggles in parallel", async () => {
    const results = await Promise.all(Array.from({ length: 7 }, () => like(ids.comments.c3!, "ada")));
    expect(results.every((r) => r.status === 200)).toBe(true);
    // Seven serialised toggles from nothing end liked, each answer alternating state.
    expect(results.filter((r) => r.body.data.has_liked).length).toBe(4);
    expect(await counts(ids.comments.c3!)).toEqual({ likeCount: 1, rows: 1 });
    const mixed = await Promise.all([...crowd, ...crowd, "ada"].map((voter) => like(ids.comments.c3!, voter)));
    expect(mixed.every((r) => r.status === 200)).toBe(true);
    expect(await counts(ids.comments.c3!)).toEqual({ likeCount: 0, rows: 0 });
  });
});
