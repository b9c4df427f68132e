/**
 * Owner comment routes (owner-api-v3.md, /comments): every comment newest first with replies as
 * rows, commenting as the project with author_role set, deleting any comment with its replies;
 * comment_count exact and the public thread updated at once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { counterProblems, projectIdOf } from "./support/counters.invariants.ts";
import { type Answer, body, createTestContext, type SnapshotParts, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

function seed(): SnapshotParts {
  return {
    project: { settings: { show_comments: false, allow_comments: false } },
    voters: [
      { ref: "boss", display_name: "Boss", role: "owner" },
      { ref: "ed", display_name: "Ed", role: "editor" },
      { ref: "a", display_name: "Ann" },
    ],
    features: [
      { ref: "f1", board: "roadmap", column: "c-open", heading: "One" },
      { ref: "hidden", board: "roadmap", column: "c-open", heading: "Awaiting", is_approved: false },
    ],
    comments: [
      { ref: "k1", feature: "f1", voter: "a", content: "first", created_at: "2026-11-01T00:00:00Z" },
      { ref: "k2", feature: "f1", voter: "a", content: "reply", parent: "k1", created_at: "2026-11-02T00:00:00Z" },
      { ref: "k3", feature: "hidden", voter: "a", content: "on hidden", created_at: "2026-11-03T00:00:00Z" },
    ],
    likes: [{ voter: "a", comment: "k1" }],
  };
}

describe("owner comments", () => {
  it("GET /comments lists every comment newest first, replies as rows, filtered by feature_id and voter_id", async () => {
    const p = await ctx.importProject(seed());
    const { ids } = p.ids;
    const base = `/api/v3/projects/${p.slug}/admin/comments`;
    const all = await body<Answer<"/api/v3/projects/{slug}/admin/comments", "get">>(await ctx.get(base, p.secretKey));
    expect(all.data.map((c) => c.id)).toEqual([ids.comments.k3, ids.comments.k2, ids.comments.k1]);
    expect(all.meta).toMatchObject({ total: 3 });
    expect(all.data[2]).toMatchObject({
      content: "first",
      author_name: "Ann",
      author_role: null,
      like_count: 1,
      has_liked: false,
      is_own: false,
      replies: [],
    });
    expect(all.data[1]).toMatchObject({ parent_id: ids.comments.k1 });
    const byFeature = await body<Answer<"/api/v3/projects/{slug}/admin/comments", "get">>(
      await ctx.get(`${base}?feature_id=${ids.features.f1}`, p.secretKey),
    );
    expect(byFeature.data.map((c) => c.id)).toEqual([ids.comments.k2, ids.comments.k1]);
    expect((await (await ctx.get(`${base}?voter_id=${ids.voters.boss}`, p.secretKey)).json()).data).toEqual([]);
    expect((await (await ctx.get(`${base}?voter_id=${ids.voters.a}&per_page=1&page=2`, p.secretKey)).json()).meta).toMatchObject({
      total: 3,
      has_more: true,
    });
  });

  it("POST comments as an owner or editor (author_role set) even where voters may not comment; DELETE removes replies; counts exact", async () => {
    const p = await ctx.importProject({ ...seed(), project: { settings: { allow_comments: false } } });
    const { ids } = p.ids;
    const admin = `/api/v3/projects/${p.slug}/admin`;
    const created = await ctx.send("POST", `${admin}/features/${ids.features.f1}/comments`, p.secretKey, {
      content: "We are on it",
      author_voter_id: ids.voters.boss,
    });
    expect(created.status).toBe(201);
    const comment = (await created.json()).data;
    expect(comment).toMatchObject({
      content: "We are on it",
      author_name: "Boss",
      author_role: "owner",
      feature_id: ids.features.f1,
      parent_id: null,
      is_own: false,
    });
    const reply = await ctx.send("POST", `${admin}/features/${ids.features.f1}/comments`, p.secretKey, {
      content: "Indeed",
      parent_id: comment.id,
      author_voter_id: ids.voters.ed,
    });
    expect((await reply.json()).data).toMatchObject({ author_role: "editor", parent_id: comment.id });
    const thread = await (await ctx.get(`/api/v3/projects/${p.slug}/features/${ids.features.f1}/comments`, p.secretKey)).json();
    expect(thread.data[0]).toMatchObject({ id: comment.id, author_role: "owner", replies: [{ author_role: "editor" }] });
    expect((await (await ctx.get(`/api/v3/projects/${p.slug}/features/${ids.features.f1}`, p.secretKey)).json()).data.comment_count).toBe(
      4,
    );

    const deleted = await ctx.send("DELETE", `${admin}/comments/${ids.comments.k1}`, p.secretKey);
    expect((await deleted.json()).data).toEqual({ deleted: true, feature_id: ids.features.f1, comment_count: 2 });
    expect((await (await ctx.get(`/api/v3/projects/${p.slug}/features/${ids.features.f1}`, p.secretKey)).json()).data.comment_count).toBe(
      2,
    );
    expect((await ctx.send("DELETE", `${admin}/comments/${ids.comments.k1}`, p.secretKey)).status).toBe(404);
    expect((await ctx.send("DELETE", `${admin}/comments/${ids.comments.k2}`, p.secretKey)).status).toBe(404);
    // A comment on a feature the public cannot see.
    expect((await (await ctx.send("DELETE", `${admin}/comments/${ids.comments.k3}`, p.secretKey)).json()).data).toMatchObject({
      comment_count: 0,
    });
    expect(await counterProblems(ctx.db, await projectIdOf(ctx.db, p.slug))).toEqual([]);
  });
});
