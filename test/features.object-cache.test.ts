/**
 * FeatureObjects kept between builds of the features listing
 * (src/routes/features/features.object-cache.ts): a page rebuilt after a vote takes the other
 * features' objects from the last build and has Postgres write only the voted one, and the
 * answer is byte for byte the one an instance with empty caches builds, after votes on this
 * instance or another, an owner's edit, and a scheduled release reaching its time. "Taken
 * from the last build" is seen through a change no write announces (a row edited in the
 * database directly) and through the cache's counts.
 */
import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.ts";
import { createAppCaches } from "../src/lib/data/app-caches.ts";
import type { AppDeps } from "../src/lib/http/context.ts";
import { type Answer, createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";

type FeatureList = Answer<"/api/v3/projects/{slug}/features", "get">;

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterEach(() => ctx.clock.release());
afterAll(async () => {
  await ctx.close();
});

const hour = 3_600_000;

function anon(name: string): { "X-VF-Anon": string } {
  return { "X-VF-Anon": `anon-${name}-${randomBytes(8).toString("hex")}` };
}

/** Four features on the roadmap, one tagged, one a duplicate of another, one in a release due in an hour. */
async function board(voters: { "X-VF-Anon": string }[], publishedAt: Date): Promise<ImportedProject> {
  return ctx.importProject({
    tags: [{ ref: "t-ui", name: "UI" }],
    voters: voters.map((headers, i) => ({ ref: `v${i}`, anon_token: headers["X-VF-Anon"] })),
    features: [
      { ref: "f1", board: "roadmap", column: "c-open", heading: "First", tags: ["t-ui"] },
      { ref: "f2", board: "roadmap", column: "c-planned", heading: "Second", description: 'Says "why"' },
      { ref: "f3", board: "roadmap", column: "c-progress", heading: "Third", linked_feature: "f1" },
      { ref: "f4", board: "roadmap", column: "c-done", heading: "Fourth" },
    ],
    releases: [{ ref: "r1", name: "Next", published_at: publishedAt.toISOString(), features: [{ feature: "f4", changelog_type: "new" }] }],
  });
}

/** An instance of the app with caches of its own, sharing the database and the shared store. */
function instance(): { app: ReturnType<typeof createApp>; caches: ReturnType<typeof createAppCaches> } {
  const caches = createAppCaches(ctx.deps.config);
  return { app: createApp({ ...ctx.deps, caches } satisfies AppDeps), caches };
}

describe("FeatureObjects kept for listing builds", () => {
  it("a rebuilt page takes the unchanged objects and is byte for byte a page built from nothing", async () => {
    const voters = [anon("ada"), anon("bob")];
    const now = Date.now();
    ctx.clock.pin(now);
    const p = await board(voters, new Date(now + hour));
    const { f1, f2, f3, f4 } = p.ids.ids.features;
    const here = instance();
    const there = instance();
    const headers = { "X-API-Key": p.secretKey };
    // Each read has a query string of its own, so the page is built, not served from the cache.
    let reads = 0;
    const listing = (at: ReturnType<typeof instance>) =>
      at.app.request(`/api/v3/projects/${p.slug}/features?sort=top&read=${reads++}`, { headers });
    /** The page this instance builds, and the page an instance with empty caches builds. */
    const bothPages = async () => {
      const built = await listing(here);
      const fresh = await listing(instance());
      expect(built.status).toBe(200);
      expect(fresh.status).toBe(200);
      const text = await built.text();
      expect(text).toBe(await fresh.text());
      return (JSON.parse(text) as FeatureList).data;
    };
    const counts = () => ({ kept: here.caches.readStats.objectsKept, written: here.caches.readStats.objectsWritten });

    await bothPages();
    expect(counts()).toEqual({ kept: 0, written: 4 });

    // Nothing changed: every object is taken from the last build.
    await bothPages();
    expect(counts()).toEqual({ kept: 4, written: 4 });

    // A vote on another instance retires the voted feature's object here; the rest are kept,
    // as an unannounced rename of f1 shows (only a kept object still carries the old heading).
    await ctx.db.updateTable("features").set({ heading: "First, renamed" }).where("id", "=", f1).execute();
    const vote = await there.app.request(`/api/v3/projects/${p.slug}/features/${f2}/vote`, {
      method: "POST",
      headers: { ...headers, ...voters[0] },
    });
    expect(vote.status).toBe(200);
    const afterVote = await listing(here);
    const votedPage = (JSON.parse(await afterVote.text()) as FeatureList).data;
    expect(votedPage.map((f) => [f.id, f.vote_count])).toEqual([
      [f2, 1],
      [f4, 0],
      [f3, 0],
      [f1, 0],
    ]);
    expect(votedPage.find((f) => f.id === f1)!.heading).toBe("First");
    expect(counts()).toEqual({ kept: 7, written: 5 });

    // Any other write (an owner's edit) retires every kept object of the project.
    const edit = await ctx.send("PATCH", `/api/v3/projects/${p.slug}/admin/features/${f3}`, p.secretKey, { heading: "Third, edited" });
    expect(edit.status).toBe(200);
    const edited = await bothPages();
    expect(edited.find((f) => f.id === f1)!.heading).toBe("First, renamed");
    expect(edited.find((f) => f.id === f3)!.heading).toBe("Third, edited");
    expect(counts()).toEqual({ kept: 7, written: 9 });

    // f4's release becomes public at its time, with no write: its object is not kept past it.
    expect(edited.find((f) => f.id === f4)!.release).toBeNull();
    ctx.clock.pin(now + hour + 1000);
    const published = await bothPages();
    expect(published.find((f) => f.id === f4)!.release).toMatchObject({ name: "Next" });
    expect(published.find((f) => f.id === f4)!.changelog_type).toBe("new");
  });

  it("a feature that climbs into a page whose listed objects are all kept is written, and the page is exact", async () => {
    const voters = [anon("ada"), anon("bob"), anon("cy")];
    const p = await board(voters, new Date(Date.now() + hour));
    const { f1, f2, f3 } = p.ids.ids.features;
    const here = instance();
    const headers = { "X-API-Key": p.secretKey };
    let reads = 0;
    const topTwo = async (at: ReturnType<typeof instance>) => {
      const answer = await at.app.request(`/api/v3/projects/${p.slug}/features?sort=top&per_page=2&read=${reads++}`, { headers });
      expect(answer.status).toBe(200);
      return answer.text();
    };
    const vote = async (featureId: number, voter: number) => {
      const path = `/api/v3/projects/${p.slug}/features/${featureId}/vote`;
      expect((await here.app.request(path, { method: "POST", headers: { ...headers, ...voters[voter] } })).status).toBe(200);
    };
    await vote(f1, 0);
    await vote(f2, 0);
    const before = JSON.parse(await topTwo(here)) as FeatureList;
    expect(before.data.map((f) => f.id)).toEqual([f2, f1]);
    const written = here.caches.readStats.objectsWritten;
    // Two votes lift f3 to the top: f1 and f2 keep their objects, f3's is written.
    await vote(f3, 1);
    await vote(f3, 2);
    const after = await topTwo(here);
    expect(after).toBe(await topTwo(instance()));
    expect((JSON.parse(after) as FeatureList).data.map((f) => [f.id, f.vote_count])).toEqual([
      [f3, 2],
      [f2, 1],
    ]);
    expect(here.caches.readStats.objectsWritten - written).toBe(1);
  });
});
