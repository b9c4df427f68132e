/**
 * src/lib/data/next-publication.ts: the moment an answer built at a given time stops being
 * current is the project's next published_at after that time, also for builds that started
 * before the cached lookup (concurrent misses) and after a publication it saw, and for a
 * project without releases.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nextPublicationAfter } from "../src/lib/data/next-publication.ts";
import { createTestContext, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
let projectId: number;
let bareProjectId: number;
const base = Date.parse("2026-11-25T12:00:00Z");
const hour = 3_600_000;

beforeAll(async () => {
  ctx = await createTestContext();
  const withReleases = await ctx.importProject({
    releases: [
      { ref: "r1", name: "1", published_at: new Date(base - hour).toISOString(), features: [] },
      { ref: "r2", name: "2", published_at: new Date(base + hour).toISOString(), features: [] },
      { ref: "r3", name: "3", published_at: new Date(base + 3 * hour).toISOString(), features: [] },
      { ref: "r4", name: "draft", published_at: null, features: [] },
    ],
  });
  const bare = await ctx.importProject();
  const idOf = async (slug: string) =>
    (await ctx.db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirstOrThrow()).id;
  projectId = await idOf(withReleases.slug);
  bareProjectId = await idOf(bare.slug);
});
afterAll(() => ctx.close());

describe("nextPublicationAfter", () => {
  it("answers the next published_at after each moment, whatever moment the cached lookup was for", async () => {
    const next = (at: number) => nextPublicationAfter(ctx.deps, projectId, new Date(at));
    expect(await next(base)).toBe(base + hour);
    // Started before the lookup, after the last publication it saw: the same answer.
    expect(await next(base - 10 * 60_000)).toBe(base + hour);
    // Before that publication: the publication itself is next.
    expect(await next(base - 2 * hour)).toBe(base - hour);
    expect(await next(base)).toBe(base + hour);
    // Once the next one has passed, the one after it.
    expect(await next(base + 2 * hour)).toBe(base + 3 * hour);
    expect(await next(base + hour)).toBe(base + 3 * hour);
    expect(await next(base + hour - 1)).toBe(base + hour);
    expect(await next(base + 4 * hour)).toBeNull();
    expect(await next(base)).toBe(base + hour);
  });

  it("answers null for a project without releases", async () => {
    expect(await nextPublicationAfter(ctx.deps, bareProjectId, new Date(base))).toBeNull();
  });
});
