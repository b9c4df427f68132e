/**
 * The shared read cache retires only the answers a vote can change (docs/decisions.md,
 * "Caching"; src/lib/data/read-dependencies.ts): the feature's detail, pages that list it, and a full
 * score-ordered first page it climbs into. Every other answer stays cached, yet each read that
 * starts after a vote answered shows it, on every instance (the freshness rule of
 * shared-read-cache.test.ts). "Stays cached" is seen through a change no write announces (a row
 * edited in the database directly): only an answer served from the cache does not show it.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../src/app.ts";
import { createAppCaches } from "../src/lib/data/app-caches.ts";
import type { AppDeps } from "../src/lib/http/context.ts";
import { type Answer, body, createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";

type FeatureList = Answer<"/api/v3/projects/{slug}/features", "get">;
type FeatureAnswer = Answer<"/api/v3/projects/{slug}/features/{id}", "get">;
type BoardDocument = Answer<"/api/v3/projects/{slug}", "get">;

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});

afterAll(async () => {
  await ctx.close();
});

let voters: { "X-VF-Anon": string }[];

beforeEach(() => {
  voters = ["ada", "bob", "cy"].map((name) => ({ "X-VF-Anon": `anon-${name}-${randomBytes(8).toString("hex")}` }));
});

async function boardWithThreeFeatures(): Promise<ImportedProject> {
  return ctx.importProject({
    voters: voters.map((headers, i) => ({ ref: `v${i}`, anon_token: headers["X-VF-Anon"] })),
    features: [
      { ref: "f1", board: "roadmap", column: "c-open", heading: "First" },
      { ref: "f2", board: "roadmap", column: "c-open", heading: "Second" },
      { ref: "f3", board: "roadmap", column: "c-open", heading: "Third" },
    ],
  });
}

async function json<T>(response: Response | Promise<Response>): Promise<T> {
  const answered = await response;
  expect(answered.status).toBe(200);
  return body<T>(answered);
}

/** Renames a feature behind the API's back: no content revision, so caches do not learn of it. */
async function renameUnannounced(featureId: number, heading: string): Promise<void> {
  await ctx.db.updateTable("features").set({ heading }).where("id", "=", featureId).execute();
}

async function castVote(p: ImportedProject, featureId: number, voter: number, method: "POST" | "DELETE" = "POST") {
  const answer = await ctx.send(method, `/api/v3/projects/${p.slug}/features/${featureId}/vote`, p.secretKey, undefined, voters[voter]);
  expect(answer.status).toBe(200);
}

describe("narrow invalidation of cached reads", () => {
  it("a vote on one feature shows at once in its detail and keeps another feature's detail cached", async () => {
    const p = await boardWithThreeFeatures();
    const { f1, f2 } = p.ids.ids.features;
    const detail = (id: number) => `/api/v3/projects/${p.slug}/features/${id}`;
    await json<FeatureAnswer>(ctx.get(detail(f1), p.secretKey));
    await json<FeatureAnswer>(ctx.get(detail(f2), p.secretKey));
    await renameUnannounced(f2, "Second, renamed");
    await castVote(p, f1, 0);
    expect((await json<FeatureAnswer>(ctx.get(detail(f1), p.secretKey))).data.vote_count).toBe(1);
    expect((await json<FeatureAnswer>(ctx.get(detail(f2), p.secretKey))).data.heading).toBe("Second");
    // Any other write retires everything (comments are not described narrowly).
    const comment = await ctx.send("POST", `${detail(f1)}/comments`, p.secretKey, { content: "Hi" }, voters[1]);
    expect(comment.status).toBe(201);
    expect((await json<FeatureAnswer>(ctx.get(detail(f2), p.secretKey))).data.heading).toBe("Second, renamed");
  });

  it("a full top page is retired by a vote that lifts an unlisted feature into it, not by a withdrawal below it", async () => {
    const p = await boardWithThreeFeatures();
    const { f1, f2, f3 } = p.ids.ids.features;
    const top = `/api/v3/projects/${p.slug}/features?sort=top&per_page=2`;
    await castVote(p, f1, 0);
    await castVote(p, f1, 1);
    await castVote(p, f2, 0);
    expect((await json<FeatureList>(ctx.get(top, p.secretKey))).data.map((f) => f.id)).toEqual([f1, f2]);
    // f3 ties f2 at one vote and wins the tie by its higher id.
    expect(f3).toBeGreaterThan(f2);
    await castVote(p, f3, 2);
    expect((await json<FeatureList>(ctx.get(top, p.secretKey))).data.map((f) => f.id)).toEqual([f1, f3]);
    // f2 is no longer listed: withdrawing its vote cannot change the page, which stays cached.
    await renameUnannounced(f1, "First, renamed");
    await castVote(p, f2, 0, "DELETE");
    const page = (await json<FeatureList>(ctx.get(top, p.secretKey))).data;
    expect(page.map((f) => [f.id, f.heading, f.vote_count])).toEqual([
      [f1, "First", 2],
      [f3, "Third", 1],
    ]);
  });

  it("the board document is retired by a vote that moves voter_count, kept through one that does not", async () => {
    const p = await boardWithThreeFeatures();
    const { f1, f2 } = p.ids.ids.features;
    const board = async () => (await json<BoardDocument>(ctx.get(`/api/v3/projects/${p.slug}`, p.secretKey))).data.project.voter_count;
    await castVote(p, f1, 0);
    expect(await board()).toBe(1);
    // Counted behind the API's back: only a rebuilt document shows the extra 100.
    await ctx.db
      .updateTable("project_voter_counts")
      .set((eb) => ({ voter_count: eb("voter_count", "+", 100) }))
      .where("project_id", "=", (eb) => eb.selectFrom("projects").select("id").where("slug", "=", p.slug))
      .where("voter_count", ">", 0)
      .execute();
    // Ada's second vote and its withdrawal leave voter_count where it was: the document stays cached.
    await castVote(p, f2, 0);
    expect(await board()).toBe(1);
    await castVote(p, f2, 0, "DELETE");
    expect(await board()).toBe(1);
    // Bob's first vote moves it, and so does his withdrawal of his only vote.
    await castVote(p, f1, 1);
    expect(await board()).toBe(102);
    await castVote(p, f1, 1, "DELETE");
    expect(await board()).toBe(101);
  });

  it("a full trending first page is retired by a vote that lifts an unlisted feature into it, not by one that does not", async () => {
    const p = await boardWithThreeFeatures();
    const { f1, f2, f3 } = p.ids.ids.features;
    const trending = async () =>
      (await json<FeatureList>(ctx.get(`/api/v3/projects/${p.slug}/features?sort=trending&per_page=2`, p.secretKey))).data.map((f) => [
        f.id,
        f.heading,
      ]);
    // Each vote is worth more the later it is cast; three votes outweigh two later ones.
    for (const voter of [0, 1, 2]) await castVote(p, f1, voter);
    for (const voter of [0, 1, 2]) await castVote(p, f2, voter);
    expect(await trending()).toEqual([
      [f2, "Second"],
      [f1, "First"],
    ]);
    await renameUnannounced(f2, "Second, renamed");
    await castVote(p, f3, 0);
    await castVote(p, f3, 1);
    expect(await trending()).toEqual([
      [f2, "Second"],
      [f1, "First"],
    ]);
    // The third vote lifts f3 above both: the page is rebuilt, with f2's object as the last
    // build wrote it (no vote touched f2: features.object-cache.ts).
    await castVote(p, f3, 2);
    expect(await trending()).toEqual([
      [f3, "Third"],
      [f2, "Second"],
    ]);
  });

  it("another instance with its own caches sees a vote at once and keeps what the vote does not touch", async () => {
    const p = await boardWithThreeFeatures();
    const { f1, f2 } = p.ids.ids.features;
    const other = createApp({ ...ctx.deps, caches: createAppCaches(ctx.deps.config) } satisfies AppDeps);
    const read = (id: number) =>
      json<FeatureAnswer>(other.request(`/api/v3/projects/${p.slug}/features/${id}`, { headers: { "X-API-Key": p.secretKey } }));
    await read(f1);
    await read(f2);
    await renameUnannounced(f2, "Second, renamed");
    await castVote(p, f1, 0);
    expect((await read(f1)).data.vote_count).toBe(1);
    expect((await read(f2)).data.heading).toBe("Second");
    await castVote(p, f1, 0, "DELETE");
    expect((await read(f1)).data.vote_count).toBe(0);
  });

  // Answers shared through Redis (deps.sharedAnswers): only the Postgres + Redis set-up has them.
  it.skipIf(!process.env.REDIS_URL)("two instances build an answer once per change between them, and both show the vote", async () => {
    const p = await boardWithThreeFeatures();
    const { f1 } = p.ids.ids.features;
    expect(ctx.deps.sharedAnswers).toBeDefined();
    const [a, b] = [0, 1].map(() => {
      const caches = createAppCaches(ctx.deps.config);
      return { caches, app: createApp({ ...ctx.deps, caches } satisfies AppDeps) };
    });
    const detail = `/api/v3/projects/${p.slug}/features/${f1}`;
    const read = async (instance: typeof a) =>
      (await json<FeatureAnswer>(instance!.app.request(detail, { headers: { "X-API-Key": p.secretKey } }))).data.vote_count;
    const builds = () => a!.caches.readStats.builds + b!.caches.readStats.builds;
    // Each instance's first read of an answer builds it (answers never kept are not shared).
    expect(await read(a)).toBe(0);
    expect(await read(b)).toBe(0);
    expect(builds()).toBe(2);
    for (const [voter, count] of [
      [0, 1],
      [1, 2],
    ] as const) {
      const vote = await a!.app.request(`${detail}/vote`, { method: "POST", headers: { "X-API-Key": p.secretKey, ...voters[voter] } });
      expect(vote.status).toBe(200);
      const before = { builds: builds(), shared: a!.caches.readStats.shared + b!.caches.readStats.shared };
      expect(await read(voter === 0 ? b : a)).toBe(count);
      expect(await read(voter === 0 ? a : b)).toBe(count);
      expect(builds() - before.builds).toBe(1);
      expect(a!.caches.readStats.shared + b!.caches.readStats.shared - before.shared).toBe(1);
    }
  });
});
