/**
 * Votes through one server process and cached filtered listings on another, on one Postgres and
 * one Redis (decisions.md, "Caching": a vote retires only the listings that can show its
 * feature; the freshness rule: a read that starts after a write's answer arrived sees it, on
 * every instance). Both instances keep answers for 600 s, so only the vote's change record can
 * retire B's cached tag page, or the FeatureObject B kept of the voted feature
 * (src/routes/features/features.object-cache.ts).
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ImportedProject } from "../support/harness.ts";
import { json, send } from "./support/http.ts";
import { idsOf } from "./support/seed.ts";
import { type ServerInstance, startServer } from "./support/server.ts";
import { type Stack, startStack } from "./support/stack.ts";

let stack: Stack;
let a: ServerInstance;
let b: ServerInstance;
let p: ImportedProject;
const token = (voter: string) => `anon-${voter}-${randomBytes(6).toString("hex")}`;
const tokens = { ada: token("ada"), bob: token("bob"), cy: token("cy") };

beforeAll(async () => {
  stack = await startStack({ env: { READ_CACHE_SECONDS: "600", PROJECT_CACHE_SECONDS: "600" } });
  a = stack.server;
  b = await startServer(stack.env);
  p = await stack.seeder.importProject({
    tags: [{ ref: "t-ui", name: "UI" }],
    voters: Object.entries(tokens).map(([ref, anon_token]) => ({ ref, anon_token })),
    features: [
      { ref: "tagged1", board: "roadmap", column: "c-open", heading: "Tagged one", tags: ["t-ui"] },
      { ref: "tagged2", board: "roadmap", column: "c-open", heading: "Tagged two", tags: ["t-ui"] },
      { ref: "plain", board: "roadmap", column: "c-open", heading: "Not tagged" },
    ],
  });
}, 180_000);
afterAll(async () => {
  await b?.stop();
  await stack?.close();
});

async function vote(method: "POST" | "DELETE", feature: number, voter: keyof typeof tokens) {
  const result = await send(a.origin, {
    method,
    path: `/api/v3/projects/${p.slug}/features/${feature}/vote`,
    headers: { "X-API-Key": p.secretKey, "X-VF-Anon": tokens[voter] },
  });
  expect(result.status, result.text).toBe(200);
}

/** The ids B lists for `query`. */
async function listedOnB(query: string): Promise<number[]> {
  const result = await send(b.origin, { path: `/api/v3/projects/${p.slug}/features?${query}`, headers: { "X-API-Key": p.secretKey } });
  expect(result.status, result.text).toBe(200);
  return json(result).data.map((feature: { id: number }) => feature.id);
}

describe("votes through instance A and instance B's cached tag page", () => {
  it("B's next read shows a vote that moves a tagged feature into the page, and stays right through others' votes", async () => {
    const { features, tags } = idsOf(p);
    const tagPage = `tag=${tags["t-ui"]}&sort=top&per_page=1`;
    await vote("POST", features.tagged1, "ada");
    await listedOnB(tagPage);
    expect(await listedOnB(tagPage)).toEqual([features.tagged1]);

    // Votes on a feature without the tag: B may keep its page, which is still right.
    await vote("POST", features.plain, "ada");
    await vote("POST", features.plain, "bob");
    expect(await listedOnB(tagPage)).toEqual([features.tagged1]);
    expect(await listedOnB("sort=top&per_page=1")).toEqual([features.plain]);

    // Two votes put tagged2 above tagged1, and their withdrawal puts it back below.
    await vote("POST", features.tagged2, "bob");
    await vote("POST", features.tagged2, "cy");
    expect(await listedOnB(tagPage)).toEqual([features.tagged2]);
    await vote("DELETE", features.tagged2, "bob");
    await vote("DELETE", features.tagged2, "cy");
    expect(await listedOnB(tagPage)).toEqual([features.tagged1]);
  });

  it("B's pages rebuilt from the FeatureObjects it kept show A's vote and equal a page built from nothing", async () => {
    const { features } = idsOf(p);
    type Listed = { id: number; vote_count: number };
    const pageOnB = async (query: string): Promise<Listed[]> => {
      const result = await send(b.origin, { path: `/api/v3/projects/${p.slug}/features?${query}`, headers: { "X-API-Key": p.secretKey } });
      expect(result.status, result.text).toBe(200);
      return json(result).data;
    };
    // Each query string is new, so B builds the page; the second build takes every object kept.
    await pageOnB("sort=new&read=1");
    const before = await pageOnB("sort=new&read=2");
    const votesBefore = before.find((f) => f.id === features.plain)!.vote_count;
    await vote("POST", features.plain, "cy");
    const rebuilt = await pageOnB("sort=new&read=3");
    expect(rebuilt.find((f) => f.id === features.plain)!.vote_count).toBe(votesBefore + 1);
    // Another per_page is another listing, which B has kept nothing for: built from nothing.
    expect(rebuilt).toEqual(await pageOnB("sort=new&per_page=21&read=4"));
  });
});
