/**
 * Races over real HTTP against the server child on Postgres + Redis: many voters voting and
 * withdrawing at once, like toggles in parallel, and parallel replays of one Idempotency-Key.
 * Afterwards every stored counter equals the rows that exist, and every answer was one the
 * contract allows (never a 5xx).
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readVoterCount } from "../../src/routes/board/board.repository.ts";
import { expectError } from "./support/assertions.ts";
import { type HttpRequest, type HttpResult, json, send } from "./support/http.ts";
import { counterMismatches } from "./support/invariants.ts";
import { idsOf, importVotingProject } from "./support/seed.ts";
import { type Stack, startStack } from "./support/stack.ts";
import { recordCount } from "./support/tally.ts";

let stack: Stack;
let slug: string;
let key: string;
let tokens: string[];
let featureIds: number[];
let commentId: number;

beforeAll(async () => {
  stack = await startStack({ env: { RATE_LIMIT_READS_PER_MINUTE: "100000", RATE_LIMIT_WRITES_PER_MINUTE: "100000" } });
  const imported = await importVotingProject(stack.seeder, 50, 5, {
    comments: [{ ref: "c", feature: "f0", voter: "v0", content: "Like me" }],
  });
  ({ slug, secretKey: key, tokens, featureIds } = imported);
  commentId = idsOf(imported).comments.c;
});
afterAll(() => stack?.close());

const base = () => `/api/v3/projects/${slug}`;
const voter = (i: number, extra: Record<string, string> = {}) => ({ "X-API-Key": key, "X-VF-Anon": tokens[i]!, ...extra });

/** Sends every request with at most `concurrency` in flight; results in request order. */
async function inParallel(requests: HttpRequest[], concurrency: number): Promise<HttpResult[]> {
  const results: HttpResult[] = new Array(requests.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests.length) {
        const i = next++;
        results[i] = await send(stack.server.origin, requests[i]!);
      }
    }),
  );
  return results;
}

/** A small deterministic generator, so that a failing mix can be replayed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe("votes and withdrawals in parallel", () => {
  it("1,000 mixed calls from 50 voters on 5 features leave every counter equal to the rows", async () => {
    const random = seeded(20261122);
    const ops = Array.from({ length: 1000 }, () => ({
      voter: Math.floor(random() * 50),
      feature: featureIds[Math.floor(random() * 5)]!,
      withdraw: random() < 0.45,
    }));
    const results = await inParallel(
      ops.map((op) => ({
        method: op.withdraw ? "DELETE" : "POST",
        path: `${base()}/features/${op.feature}/vote`,
        headers: voter(op.voter),
      })),
      50,
    );
    let cast = 0;
    let withdrawn = 0;
    results.forEach((result, i) => {
      const op = ops[i]!;
      expect(result.error, result.error).toBeUndefined();
      const body = json(result);
      if (result.status === 200) {
        expect(body.data).toMatchObject({ feature_id: op.feature, has_voted: !op.withdraw });
        // The answer's count is read after the voter's own change: a cast counts the voter (at
        // least 1 of the 50), a withdrawal leaves at most the 49 others.
        expect(body.data.vote_count).toBeGreaterThanOrEqual(op.withdraw ? 0 : 1);
        expect(body.data.vote_count).toBeLessThanOrEqual(op.withdraw ? 49 : 50);
        if (op.withdraw) withdrawn++;
        else cast++;
      } else {
        expect(result.status, result.text).toBe(409);
        expectError(409, body, op.withdraw ? "not_found" : "already_exists");
      }
    });
    const db = stack.seeder.handle.db;
    const rows = await db
      .selectFrom("votes")
      .innerJoin("features", "features.id", "votes.feature_id")
      .select(["votes.feature_id", "votes.voter_id"])
      .where("features.id", "in", featureIds)
      .execute();
    // Each successful vote added exactly one row, each successful withdrawal removed one.
    expect(rows.length).toBe(cast - withdrawn);
    expect(await counterMismatches(db, slug)).toEqual([]);
    const project = await db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirstOrThrow();
    expect(await readVoterCount(db, project.id)).toBe(new Set(rows.map((r) => r.voter_id)).size);
    // What the API reports agrees with the rows.
    for (const featureId of featureIds) {
      const response = await send(stack.server.origin, { path: `${base()}/features/${featureId}`, headers: { "X-API-Key": key } });
      expect(json(response).data.vote_count).toBe(rows.filter((r) => r.feature_id === featureId).length);
    }
    console.info(`votes race: ${cast} cast, ${withdrawn} withdrawn, ${1000 - cast - withdrawn} refused with 409, ${rows.length} rows left`);
    recordCount("races", "1,000 parallel votes/withdrawals (50 voters, 5 features)");
  });
});

describe("like toggles in parallel", () => {
  it("each voter's state is the parity of their toggles and like_count equals the like rows", async () => {
    const random = seeded(7);
    const toggles: number[] = [];
    for (let v = 0; v < 30; v++) for (let t = 1 + Math.floor(random() * 4); t > 0; t--) toggles.push(v);
    for (let t = 0; t < 20; t++) toggles.push(49); // one voter hammering the same toggle
    const results = await inParallel(
      toggles.map((v) => ({ method: "POST", path: `${base()}/comments/${commentId}/like`, headers: voter(v) })),
      40,
    );
    for (const result of results) {
      expect(result.status, result.text).toBe(200);
      const data = json(result).data;
      expect(data.comment_id).toBe(commentId);
      // Read after the toggle: a like counts its voter (at least 1 of the 31 voters), an unlike
      // leaves at most the 30 others.
      expect(data.like_count).toBeGreaterThanOrEqual(data.has_liked ? 1 : 0);
      expect(data.like_count).toBeLessThanOrEqual(data.has_liked ? 31 : 30);
    }
    const db = stack.seeder.handle.db;
    const likes = await db
      .selectFrom("comment_likes")
      .innerJoin("voters", "voters.id", "comment_likes.voter_id")
      .select("voters.anon_token_hash")
      .where("comment_id", "=", commentId)
      .execute();
    const counts = new Map<number, number>();
    for (const v of toggles) counts.set(v, (counts.get(v) ?? 0) + 1);
    const expectedLikers = [...counts].filter(([, n]) => n % 2 === 1).length;
    expect(likes.length).toBe(expectedLikers);
    expect(await counterMismatches(db, slug)).toEqual([]);
    const listed = await send(stack.server.origin, { path: `${base()}/features/${featureIds[0]}/comments`, headers: { "X-API-Key": key } });
    expect(json(listed).data.find((c: { id: number }) => c.id === commentId).like_count).toBe(expectedLikers);
    recordCount("races", `${toggles.length} parallel like toggles`);
  });
});

describe("one Idempotency-Key replayed in parallel", () => {
  const cases = [
    {
      name: "comment",
      method: "POST",
      path: () => `${base()}/features/${featureIds[1]}/comments`,
      body: () => JSON.stringify({ content: `parallel replay ${Date.now()}` }),
      status: 201,
    },
    { name: "vote", method: "POST", path: () => `${base()}/features/${featureIds[2]}/vote`, body: () => undefined, status: 200 },
    {
      name: "suggestion",
      method: "POST",
      path: () => `${base()}/features`,
      body: () => JSON.stringify({ heading: `Parallel idea ${Date.now()}`, description: "Sent 20 times at once" }),
      status: 201,
    },
  ];
  for (const c of cases) {
    it(`executes a ${c.name} once; every other answer is the byte-identical replay or 409 in progress`, async () => {
      const idempotencyKey = `par-${c.name}-${Date.now()}`;
      const body = c.body();
      const request = { method: c.method, path: c.path(), headers: voter(10, { "Idempotency-Key": idempotencyKey }), body };
      const results = await inParallel(
        Array.from({ length: 20 }, () => request),
        20,
      );
      const executed = results.filter((r) => r.status === c.status && r.headers["idempotent-replay"] === undefined);
      expect(executed, results.map((r) => `${r.status} ${r.text.slice(0, 80)}`).join("\n")).toHaveLength(1);
      const original = executed[0]!;
      for (const r of results) {
        if (r === original) continue;
        if (r.status === 409) {
          expectError(409, json(r), "idempotency_in_progress");
          expect(Number(r.headers["retry-after"])).toBeGreaterThanOrEqual(1);
        } else {
          expect(r.status).toBe(c.status);
          expect(r.headers["idempotent-replay"]).toBe("true");
          expect(r.text).toBe(original.text);
        }
      }
      // Later replays are the recorded response, byte for byte.
      const later = await send(stack.server.origin, request);
      expect(later.status).toBe(c.status);
      expect(later.headers["idempotent-replay"]).toBe("true");
      expect(later.text).toBe(original.text);
      if (c.name === "comment") {
        const content = JSON.parse(body!).content;
        const rows = await stack.seeder.handle.db.selectFrom("comments").select("id").where("content", "=", content).execute();
        expect(rows).toHaveLength(1);
      }
      if (c.name === "suggestion") {
        const heading = JSON.parse(body!).heading;
        const rows = await stack.seeder.handle.db.selectFrom("features").select("id").where("heading", "=", heading).execute();
        expect(rows).toHaveLength(1);
      }
      expect(await counterMismatches(stack.seeder.handle.db, slug)).toEqual([]);
      recordCount("races", `20 parallel replays of one Idempotency-Key (${c.name})`);
    });
  }

  it("refuses the key reused with a different body or on another route (409 idempotency_mismatch), not replayed", async () => {
    const idempotencyKey = `mismatch-${Date.now()}`;
    const votesOf = () => stack.seeder.handle.db.selectFrom("votes").select("voter_id").where("feature_id", "=", featureIds[3]!).execute();
    const votesBefore = (await votesOf()).length;
    const path = `${base()}/features/${featureIds[3]}/comments`;
    const first = await send(stack.server.origin, {
      method: "POST",
      path,
      headers: voter(11, { "Idempotency-Key": idempotencyKey }),
      body: JSON.stringify({ content: "first body" }),
    });
    expect(first.status).toBe(201);
    const otherBody = await send(stack.server.origin, {
      method: "POST",
      path,
      headers: voter(11, { "Idempotency-Key": idempotencyKey }),
      body: JSON.stringify({ content: "second body" }),
    });
    expect(otherBody.status).toBe(409);
    expectError(409, json(otherBody), "idempotency_mismatch");
    expect(otherBody.headers["idempotent-replay"]).toBeUndefined();
    const otherRoute = await send(stack.server.origin, {
      method: "POST",
      path: `${base()}/features/${featureIds[3]}/vote`,
      headers: voter(11, { "Idempotency-Key": idempotencyKey }),
    });
    expect(otherRoute.status).toBe(409);
    expectError(409, json(otherRoute), "idempotency_mismatch");
    const rows = await stack.seeder.handle.db
      .selectFrom("comments")
      .select("content")
      .where("feature_id", "=", featureIds[3]!)
      .where(sql<boolean>`content in ('first body', 'second body')`)
      .execute();
    expect(rows.map((r) => r.content)).toEqual(["first body"]);
    expect(await votesOf()).toHaveLength(votesBefore);
    recordCount("hostile", "Idempotency-Key reused with another body / on another route", 2);
  });
});
