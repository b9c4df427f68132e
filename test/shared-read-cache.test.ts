/**
 * The shared read cache (src/middleware/shared-read-cache.ts) never shows a reader less than
 * the writes that answered before the read began: votes, withdrawals and comments made through
 * the API are in the next anonymous read of the list, the detail, the comments and the board,
 * also when the write went through another instance sharing the store. Reads with an identity
 * are personal and never served from it; without a content revision (the shared store down)
 * nothing is.
 */
import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../src/app.ts";
import { CACHE_CHANNEL, createAppCaches } from "../src/lib/data/app-caches.ts";
import type { AppDeps } from "../src/lib/http/context.ts";
import { type Answer, body, createTestContext, type ErrorAnswer, type ImportedProject, type TestContext } from "./support/harness.ts";

type FeatureList = Answer<"/api/v3/projects/{slug}/features", "get">;
type FeatureAnswer = Answer<"/api/v3/projects/{slug}/features/{id}", "get">;
type ListAnswer = Answer<"/api/v3/projects/{slug}/features", "get">;
type CreatedFeature = Answer<"/api/v3/projects/{slug}/features", "post", 201>;
type Comments = Answer<"/api/v3/projects/{slug}/features/{id}/comments", "get">;
type BoardDocument = Answer<"/api/v3/projects/{slug}", "get">;

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});

afterAll(async () => {
  await ctx.close();
});

// Anonymous tokens are unique across projects: each test's board gets its own voters.
let ada: { "X-VF-Anon": string };
let bob: { "X-VF-Anon": string };

beforeEach(() => {
  ada = { "X-VF-Anon": `anon-ada-${randomBytes(8).toString("hex")}` };
  bob = { "X-VF-Anon": `anon-bob-${randomBytes(8).toString("hex")}` };
});

async function boardWithTwoFeatures(): Promise<ImportedProject> {
  return ctx.importProject({
    voters: [
      { ref: "ada", anon_token: ada["X-VF-Anon"] },
      { ref: "bob", anon_token: bob["X-VF-Anon"] },
    ],
    features: [
      { ref: "f1", board: "roadmap", column: "c-open", heading: "First" },
      { ref: "f2", board: "roadmap", column: "c-open", heading: "Second" },
    ],
  });
}

/** The body of a 200 answer, as the answer `T` the OpenAPI document gives. */
async function json<T>(response: Response | Promise<Response>): Promise<T> {
  const answered = await response;
  expect(answered.status).toBe(200);
  return body<T>(answered);
}

describe("shared read cache", () => {
  it("a vote and its withdrawal show at once in the anonymous list, detail and board", async () => {
    const p = await boardWithTwoFeatures();
    const f2 = p.ids.ids.features.f2;
    const base = `/api/v3/projects/${p.slug}`;
    const countOf = async () => ({
      listed: (await json<FeatureList>(ctx.get(`${base}/features?sort=top`, p.secretKey))).data.find((f) => f.id === f2)!.vote_count,
      detail: (await json<FeatureAnswer>(ctx.get(`${base}/features/${f2}`, p.secretKey))).data.vote_count,
      voters: (await json<BoardDocument>(ctx.get(base, p.secretKey))).data.project.voter_count,
    });
    // Read twice so that the second read is served from the cache.
    await countOf();
    expect(await countOf()).toEqual({ listed: 0, detail: 0, voters: 0 });

    expect((await ctx.send("POST", `${base}/features/${f2}/vote`, p.secretKey, undefined, ada)).status).toBe(200);
    expect(await countOf()).toEqual({ listed: 1, detail: 1, voters: 1 });
    const top = (await json<FeatureList>(ctx.get(`${base}/features?sort=top`, p.secretKey))).data;
    expect(top[0]!.id).toBe(f2);

    expect((await ctx.send("DELETE", `${base}/features/${f2}/vote`, p.secretKey, undefined, ada)).status).toBe(200);
    expect(await countOf()).toEqual({ listed: 0, detail: 0, voters: 0 });
  });

  it("a filtered first page (tag, board) shows a vote that moves one of its features into it, not others' votes", async () => {
    const cy = { "X-VF-Anon": `anon-cy-${randomBytes(8).toString("hex")}` };
    const p = await ctx.importProject({
      tags: [{ ref: "t-ui", name: "UI" }],
      voters: [
        { ref: "ada", anon_token: ada["X-VF-Anon"] },
        { ref: "bob", anon_token: bob["X-VF-Anon"] },
        { ref: "cy", anon_token: cy["X-VF-Anon"] },
      ],
      features: [
        { ref: "tagged1", board: "roadmap", column: "c-open", heading: "Tagged one", tags: ["t-ui"] },
        { ref: "tagged2", board: "roadmap", column: "c-open", heading: "Tagged two", tags: ["t-ui"] },
        { ref: "plain", board: "roadmap", column: "c-open", heading: "Not tagged" },
      ],
    });
    const { features, tags } = p.ids.ids;
    const base = `/api/v3/projects/${p.slug}`;
    const firstOf = async (query: string) =>
      (await json<FeatureList>(ctx.get(`${base}/features?${query}`, p.secretKey))).data.map((f) => f.id);
    const vote = async (feature: number, who: Record<string, string>) =>
      expect((await ctx.send("POST", `${base}/features/${feature}/vote`, p.secretKey, undefined, who)).status).toBe(200);
    const tagged = `tag=${tags["t-ui"]}&sort=top&per_page=1`;
    await vote(features.tagged1, ada);
    await firstOf(tagged);
    expect(await firstOf(tagged)).toEqual([features.tagged1]);
    // Votes on a feature the page cannot list leave it as it is; it is still right.
    await vote(features.plain, ada);
    await vote(features.plain, bob);
    expect(await firstOf(tagged)).toEqual([features.tagged1]);
    expect(await firstOf("sort=top&per_page=1")).toEqual([features.plain]);
    // Two votes move tagged2 above tagged1: the cached page must show it at once.
    await vote(features.tagged2, bob);
    await vote(features.tagged2, cy);
    expect(await firstOf(tagged)).toEqual([features.tagged2]);
  });

  it("a new comment shows at once in the comments list and the feature's comment_count", async () => {
    const p = await boardWithTwoFeatures();
    const f1 = p.ids.ids.features.f1;
    const base = `/api/v3/projects/${p.slug}`;
    await ctx.get(`${base}/features/${f1}/comments`, p.secretKey);
    expect((await json<Comments>(ctx.get(`${base}/features/${f1}/comments`, p.secretKey))).data).toEqual([]);
    expect((await ctx.send("POST", `${base}/features/${f1}/comments`, p.secretKey, { content: "Cached?" }, ada)).status).toBe(201);
    const comments = (await json<Comments>(ctx.get(`${base}/features/${f1}/comments`, p.secretKey))).data;
    expect(comments.map((comment) => comment.content)).toEqual(["Cached?"]);
    expect((await json<FeatureAnswer>(ctx.get(`${base}/features/${f1}`, p.secretKey))).data.comment_count).toBe(1);
  });

  it("a write through another instance sharing the store is seen by this one's next read", async () => {
    const p = await boardWithTwoFeatures();
    const f1 = p.ids.ids.features.f1;
    // Another instance: its own app and read cache, the same database and shared store.
    const other = createApp({ ...ctx.deps } satisfies AppDeps);
    const detail = `/api/v3/projects/${p.slug}/features/${f1}`;
    await ctx.get(detail, p.secretKey);
    expect((await json<FeatureAnswer>(ctx.get(detail, p.secretKey))).data.vote_count).toBe(0);
    const vote = await other.request(`${detail}/vote`, { method: "POST", headers: { "X-API-Key": p.secretKey, ...bob } });
    expect(vote.status).toBe(200);
    expect((await json<FeatureAnswer>(ctx.get(detail, p.secretKey))).data.vote_count).toBe(1);
  });

  it("reads with an identity are the voter's own: has_voted right after the vote, false for anyone else", async () => {
    const p = await boardWithTwoFeatures();
    const f1 = p.ids.ids.features.f1;
    const detail = `/api/v3/projects/${p.slug}/features/${f1}`;
    await ctx.get(detail, p.secretKey);
    expect((await ctx.send("POST", `${detail}/vote`, p.secretKey, undefined, ada)).status).toBe(200);
    expect((await json<FeatureAnswer>(ctx.get(detail, p.secretKey, ada))).data.has_voted).toBe(true);
    expect((await json<FeatureAnswer>(ctx.get(detail, p.secretKey, bob))).data.has_voted).toBe(false);
    expect((await json<FeatureAnswer>(ctx.get(detail, p.secretKey))).data.has_voted).toBe(false);
  });

  it("an identity read starting from the cached anonymous page gets its own has_voted, on list and detail", async () => {
    const p = await boardWithTwoFeatures();
    const { f1, f2 } = p.ids.ids.features;
    const base = `/api/v3/projects/${p.slug}`;
    expect((await ctx.send("POST", `${base}/features/${f2}/vote`, p.secretKey, undefined, ada)).status).toBe(200);
    const list = `${base}/features?sort=new`;
    // Anonymous reads fill the cache for this revision; the identity reads then start from it.
    expect((await json<FeatureList>(ctx.get(list, p.secretKey))).data.map((f) => f.has_voted)).toEqual([false, false]);
    await json<FeatureAnswer>(ctx.get(`${base}/features/${f2}`, p.secretKey));
    const votedIn = async (headers: Record<string, string>) =>
      Object.fromEntries((await json<FeatureList>(ctx.get(list, p.secretKey, headers))).data.map((f) => [f.id, f.has_voted]));
    expect(await votedIn(ada)).toEqual({ [f1]: false, [f2]: true });
    expect(await votedIn(bob)).toEqual({ [f1]: false, [f2]: false });
    expect((await json<FeatureAnswer>(ctx.get(`${base}/features/${f2}`, p.secretKey, ada))).data.has_voted).toBe(true);
    expect((await json<FeatureAnswer>(ctx.get(`${base}/features/${f2}`, p.secretKey, bob))).data.has_voted).toBe(false);
    // The personal answer is the anonymous one but for has_voted.
    const anonymous = (await json<FeatureList>(ctx.get(list, p.secretKey))).data;
    const personal = (await json<FeatureList>(ctx.get(list, p.secretKey, ada))).data;
    expect(personal.map((f) => ({ ...f, has_voted: false }))).toEqual(anonymous);
    // And the anonymous cached page was not changed by personalizing it.
    expect((await json<FeatureList>(ctx.get(list, p.secretKey))).data.every((f) => f.has_voted === false)).toBe(true);
  });

  it("readers that all carry an identity share one cached list page, each with their own has_voted and ETag", async () => {
    const p = await boardWithTwoFeatures();
    const { f1, f2 } = p.ids.ids.features;
    const base = `/api/v3/projects/${p.slug}`;
    expect((await ctx.send("POST", `${base}/features/${f1}/vote`, p.secretKey, undefined, bob)).status).toBe(200);
    const list = `${base}/features?sort=oldest`;
    const first = await ctx.get(list, p.secretKey, ada);
    expect(first.status).toBe(200);
    expect(first.headers.get("X-RateLimit-Remaining")).not.toBeNull();
    const adaPage = (await body<FeatureList>(first)).data;
    expect(adaPage.map((f) => [f.id, f.has_voted])).toEqual([
      [f1, false],
      [f2, false],
    ]);
    // Unannounced, so only an uncached read could show it: the next identity reads are cached.
    await ctx.db.updateTable("features").set({ heading: "Renamed behind the cache" }).where("id", "=", f1).execute();
    const second = await ctx.get(list, p.secretKey, bob);
    const bobPage = (await body<FeatureList>(second)).data;
    expect(bobPage.map((f) => [f.id, f.has_voted, f.heading])).toEqual([
      [f1, true, "First"],
      [f2, false, "Second"],
    ]);
    expect(second.headers.get("ETag")).not.toBe(first.headers.get("ETag"));
    const revalidated = await ctx.get(list, p.secretKey, { ...bob, "If-None-Match": second.headers.get("ETag")! });
    expect(revalidated.status).toBe(304);
    // Each reader's tag stands for their own body: bob's does not revalidate ada's page.
    expect((await ctx.get(list, p.secretKey, { ...ada, "If-None-Match": second.headers.get("ETag")! })).status).toBe(200);
    expect((await ctx.get(list, p.secretKey, { ...ada, "If-None-Match": first.headers.get("ETag")! })).status).toBe(304);
  });

  it("a voter's own suggestion awaiting review is shown to them although anonymous reads of it are refused", async () => {
    const p = await boardWithTwoFeatures();
    const base = `/api/v3/projects/${p.slug}`;
    const created = await ctx.send("POST", `${base}/features`, p.secretKey, { heading: "Pending idea", description: "x" }, ada);
    expect(created.status).toBe(201);
    const id = (await body<CreatedFeature>(created)).data.id;
    for (let i = 0; i < 2; i++) expect((await ctx.get(`${base}/features/${id}`, p.secretKey)).status).toBe(404);
    expect((await json<FeatureAnswer>(ctx.get(`${base}/features/${id}`, p.secretKey, ada))).data).toMatchObject({
      heading: "Pending idea",
      is_approved: false,
    });
    expect((await ctx.get(`${base}/features/${id}`, p.secretKey, bob)).status).toBe(404);
    const listed = (await json<FeatureList>(ctx.get(`${base}/features?sort=new`, p.secretKey, ada))).data;
    expect(listed.map((f) => f.id)).not.toContain(id);
  });

  it("the board document is the same for every reader: readers with an identity share its entry", async () => {
    const p = await boardWithTwoFeatures();
    const board = `/api/v3/projects/${p.slug}`;
    const anonymous = await json<BoardDocument>(ctx.get(board, p.secretKey));
    expect(anonymous.data.project.voter_count).toBe(0);
    // Unannounced, so only an uncached build of the document (voter_count is read per build) shows it.
    const projectId = (await ctx.db.selectFrom("projects").select("id").where("slug", "=", p.slug).executeTakeFirstOrThrow()).id;
    await ctx.db.insertInto("project_voter_counts").values({ project_id: projectId, shard: 0, voter_count: 42 }).execute();
    expect(await json<BoardDocument>(ctx.get(board, p.secretKey, ada))).toEqual(anonymous);
    await ctx.db.deleteFrom("project_voter_counts").where("project_id", "=", projectId).execute();
    expect((await ctx.send("POST", `${board}/features/${p.ids.ids.features.f1}/vote`, p.secretKey, undefined, ada)).status).toBe(200);
    const after = (await json<BoardDocument>(ctx.get(board, p.secretKey, bob))).data;
    expect(after.project.voter_count).toBe(1);
  });

  it("a cached answer carries the same ETag and still answers If-None-Match with 304", async () => {
    const p = await boardWithTwoFeatures();
    const path = `/api/v3/projects/${p.slug}/features`;
    const first = await ctx.get(path, p.secretKey);
    const second = await ctx.get(path, p.secretKey);
    expect(second.headers.get("ETag")).toBe(first.headers.get("ETag"));
    expect(await second.text()).toBe(await first.text());
    const revalidated = await ctx.get(path, p.secretKey, { "If-None-Match": first.headers.get("ETag")! });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get("X-RateLimit-Remaining")).not.toBeNull();
  });

  it("validation failures are answered per request, never from the cache", async () => {
    const p = await boardWithTwoFeatures();
    const path = `/api/v3/projects/${p.slug}/features?sort=sideways`;
    for (let i = 0; i < 2; i++) {
      const response = await ctx.get(path, p.secretKey);
      expect(response.status).toBe(422);
      expect((await body<ErrorAnswer>(response)).error.field).toBe("sort");
    }
  });

  it("without a content revision (shared store not answering) every read goes to the database", async () => {
    const p = await boardWithTwoFeatures();
    const f1 = p.ids.ids.features.f1;
    const limiter = ctx.deps.rateLimiter;
    const blind: AppDeps["rateLimiter"] = {
      consume: (...args) => limiter.consume(...args),
      consumeReadingRevisions: async (...args) => ({ ...(await limiter.consumeReadingRevisions(...args)), revisions: null }),
      close: async () => {},
    };
    const app = createApp({ ...ctx.deps, rateLimiter: blind, contentRevisions: { bump: async () => false } });
    const detail = `/api/v3/projects/${p.slug}/features/${f1}`;
    const read = async () => (await body<FeatureAnswer>(await app.request(detail, { headers: { "X-API-Key": p.secretKey } }))).data.heading;
    expect(await read()).toBe("First");
    // A change no write announces: only an uncached read can see it.
    await ctx.db.updateTable("features").set({ heading: "First, renamed" }).where("id", "=", f1).execute();
    expect(await read()).toBe("First, renamed");
  });

  it("an owner edit moves no lookups revision and sends no notice: another instance sees it, and its totals, by the content revision", async () => {
    const p = await boardWithTwoFeatures();
    const { f1, f2 } = p.ids.ids.features;
    const base = `/api/v3/projects/${p.slug}`;
    // Instance B: its own caches, which no notice reaches (it does not listen).
    const b = createApp({ ...ctx.deps, caches: createAppCaches(ctx.deps.config) });
    const readOnB = <T>(path: string) => json<T>(b.request(`${base}${path}`, { headers: { "X-API-Key": p.secretKey } }));
    const listed = async () => {
      const answer = await readOnB<ListAnswer>("/features?status=open");
      return { ids: answer.data.map((feature) => feature.id), total: answer.meta.total };
    };
    const { id: projectId } = await ctx.db.selectFrom("projects").select("id").where("slug", "=", p.slug).executeTakeFirstOrThrow();
    const lookupsRevision = async () =>
      (await ctx.deps.rateLimiter.consumeReadingRevisions(`probe-${p.slug}`, 1000, 60, projectId)).revisions?.lookups;
    expect(await listed()).toEqual({ ids: [f2, f1], total: 2 });
    expect(await listed()).toEqual({ ids: [f2, f1], total: 2 });
    const before = await lookupsRevision();
    const moved = await ctx.send("PATCH", `${base}/admin/features/${f1}`, p.secretKey, { status: "planned" });
    expect(moved.status).toBe(200);
    expect(await lookupsRevision()).toBe(before);
    expect(await listed()).toEqual({ ids: [f2], total: 1 });
    expect((await readOnB<FeatureAnswer>(`/features/${f1}`)).data.status).toBe("planned");
    // Votes leave the total as counted.
    expect((await ctx.send("POST", `${base}/features/${f2}/vote`, p.secretKey, undefined, ada)).status).toBe(200);
    expect(await listed()).toEqual({ ids: [f2], total: 1 });
    expect((await ctx.send("PATCH", `${base}/admin/features/${f1}`, p.secretKey, { status: "open" })).status).toBe(200);
    expect(await listed()).toEqual({ ids: [f2, f1], total: 2 });
  });

  it("an owner edit whose content revision could not be recorded tells every instance to drop its caches", async () => {
    const p = await boardWithTwoFeatures();
    const notices: string[] = [];
    const stop = await ctx.deps.listen(CACHE_CHANNEL, (payload) => {
      if (payload !== undefined) notices.push(payload);
    });
    const until = async (seen: () => boolean) => {
      for (let i = 0; i < 300 && !seen(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    try {
      // Notices already on their way (the import's) arrive before a marker sent now.
      const marker = `marker-${randomBytes(4).toString("hex")}`;
      await sql`SELECT pg_notify(${CACHE_CHANNEL}, ${marker})`.execute(ctx.db);
      await until(() => notices.includes(marker));
      notices.length = 0;
      const silentStore = createApp({ ...ctx.deps, contentRevisions: { bump: async () => false } });
      const edited = await silentStore.request(`/api/v3/projects/${p.slug}/admin/features/${p.ids.ids.features.f1}`, {
        method: "PATCH",
        headers: { "X-API-Key": p.secretKey, "Content-Type": "application/json" },
        body: JSON.stringify({ heading: "Renamed" }),
      });
      expect(edited.status).toBe(200);
      await until(() => notices.includes(""));
      expect(notices).toContain("");
    } finally {
      await stop();
    }
  });

  it("READ_CACHE_SECONDS=0 turns the cache off", async () => {
    const uncached = await createTestContext({ READ_CACHE_SECONDS: "0" });
    try {
      const p = await uncached.importProject({ features: [{ ref: "f1", board: "roadmap", column: "c-open", heading: "Before" }] });
      const detail = `/api/v3/projects/${p.slug}/features/${p.ids.ids.features.f1}`;
      expect((await json<FeatureAnswer>(uncached.get(detail, p.secretKey))).data.heading).toBe("Before");
      await uncached.db.updateTable("features").set({ heading: "After" }).where("id", "=", p.ids.ids.features.f1).execute();
      expect((await json<FeatureAnswer>(uncached.get(detail, p.secretKey))).data.heading).toBe("After");
    } finally {
      await uncached.close();
    }
  });

  it("without the off switch the same unannounced change is not seen until an API write (the cache is on)", async () => {
    const p = await ctx.importProject({
      voters: [{ ref: "ada", anon_token: ada["X-VF-Anon"] }],
      features: [{ ref: "f1", board: "roadmap", column: "c-open", heading: "Before" }],
    });
    const f1 = p.ids.ids.features.f1;
    const detail = `/api/v3/projects/${p.slug}/features/${f1}`;
    expect((await json<FeatureAnswer>(ctx.get(detail, p.secretKey))).data.heading).toBe("Before");
    await ctx.db.updateTable("features").set({ heading: "After" }).where("id", "=", f1).execute();
    expect((await json<FeatureAnswer>(ctx.get(detail, p.secretKey))).data.heading).toBe("Before");
    expect((await ctx.send("POST", `${detail}/vote`, p.secretKey, undefined, ada)).status).toBe(200);
    expect((await json<FeatureAnswer>(ctx.get(detail, p.secretKey))).data.heading).toBe("After");
  });
});
