/**
 * One contract suite run against every store implementation: the in-process one always, the
 * Redis one when REDIS_URL is set (CI's second run).
 */
import { randomBytes } from "node:crypto";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { RedisIdempotencyStore } from "./idempotency.redis.ts";
import { MemoryIdempotencyStore, MemoryRateLimiter } from "./memory.ts";
import { connectRedis, RedisRateLimiter } from "./redis.ts";
import {
  type ClaimResult,
  type ContentRevisions,
  type IdempotencyStore,
  IdempotencyStoreUnavailable,
  type RateLimiter,
} from "./store.types.ts";

const logger = pino({ level: "silent" });
const redisUrl = process.env.REDIS_URL;
const redis = redisUrl ? connectRedis(redisUrl, 500, `fbtest:${randomBytes(4).toString("hex")}:`) : undefined;
afterAll(() => redis?.disconnect());

const implementations: [string, () => { limiter: RateLimiter & ContentRevisions; store: IdempotencyStore }][] = [
  ["memory", () => ({ limiter: new MemoryRateLimiter(), store: new MemoryIdempotencyStore() })],
];
if (redis) {
  implementations.push([
    "redis",
    () => ({ limiter: new RedisRateLimiter(redis, logger), store: new RedisIdempotencyStore(redis, logger) }),
  ]);
}

describe.each(implementations)("%s store", (_name, make) => {
  const bucket = () => `b-${randomBytes(6).toString("hex")}`;

  it("counts requests against the budget and refuses past it", async () => {
    const { limiter } = make();
    const key = bucket();
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await limiter.consume(key, 3, 60));
    expect(results.map((r) => r.remaining)).toEqual([2, 1, 0, 0]);
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
    expect(results[0]!.limit).toBe(3);
    const now = Date.now() / 1000;
    expect(results[0]!.resetAt).toBeGreaterThan(now);
    expect(results[0]!.resetAt).toBeLessThanOrEqual(Math.ceil(now) + 60);
    await limiter.close();
  });

  it("keeps buckets apart and counts parallel requests exactly", async () => {
    const { limiter } = make();
    const a = bucket();
    const b = bucket();
    const parallel = await Promise.all(Array.from({ length: 50 }, () => limiter.consume(a, 1000, 60)));
    expect(new Set(parallel.map((r) => r.remaining)).size).toBe(50);
    expect((await limiter.consume(a, 1000, 60)).remaining).toBe(1000 - 51);
    expect((await limiter.consume(b, 1000, 60)).remaining).toBe(999);
  });

  it("reads a project's revisions with the counter: stable until bumped, new after, per project", async () => {
    const { limiter } = make();
    const project = () => Math.floor(Math.random() * 2 ** 30);
    const [id, other] = [project(), project()];
    const read = async (projectId: number) => (await limiter.consumeReadingRevisions(bucket(), 10, 60, projectId)).revisions!;
    const first = await read(id);
    expect(first).toEqual({ content: expect.any(String), lookups: expect.any(String) });
    expect(await read(id)).toEqual(first);
    const otherRevisions = await read(other);
    expect(otherRevisions.content).not.toBe(first.content);
    expect(await limiter.bump(id)).toEqual({ lookups: null });
    const second = await read(id);
    expect(second.content).not.toBe(first.content);
    // A content change leaves the lookups alone; an owner change replaces both.
    expect(second.lookups).toBe(first.lookups);
    // The bump names the lookups revision it replaced and the one it set.
    const bumped = await limiter.bump(id, { lookups: true });
    const third = await read(id);
    expect(bumped).toEqual({ lookups: { previous: second.lookups, current: third.lookups } });
    expect(third.content).not.toBe(second.content);
    expect(third.lookups).not.toBe(second.lookups);
    expect(await read(other)).toEqual(otherRevisions);
    // The counter is the same one consume() counts.
    const counted = bucket();
    await limiter.consume(counted, 10, 60);
    expect((await limiter.consumeReadingRevisions(counted, 10, 60, id)).rate.remaining).toBe(8);
    // Concurrent readers of a project nobody wrote to yet all get the one revision created.
    const fresh = project();
    const parallel = await Promise.all(Array.from({ length: 20 }, () => read(fresh)));
    expect(new Set(parallel.map((r) => r.content)).size).toBe(1);
  });

  const token = (claim: ClaimResult) => {
    expect(claim.claimed).toBe(true);
    return (claim as { token: string }).token;
  };
  const response = { status: 201, headers: { "Content-Type": "application/json" }, body: '{"data":1}' };

  it("claims a key once; later claims see the running record, then the finished one", async () => {
    const { store } = make();
    const key = bucket();
    const first = token(await store.claim(key, "fp", 10));
    expect(await store.claim(key, "fp", 10)).toEqual({ claimed: false, record: { state: "running", fingerprint: "fp" } });
    await store.complete(key, first, "fp", response, 60);
    expect(await store.claim(key, "other", 10)).toEqual({ claimed: false, record: { state: "done", fingerprint: "fp", response } });
  });

  it("lets exactly one of many parallel claims win", async () => {
    const { store } = make();
    const key = bucket();
    const claims = await Promise.all(Array.from({ length: 20 }, () => store.claim(key, "fp", 10)));
    expect(claims.filter((c) => c.claimed)).toHaveLength(1);
  });

  it("frees a released key and expires a lock after its time", async () => {
    const { store } = make();
    const key = bucket();
    await store.release(key, token(await store.claim(key, "fp", 10)));
    token(await store.claim(key, "fp", 1));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    token(await store.claim(key, "fp", 10));
  });

  it("completes and releases only its own claim: never another claim's lock nor a finished record", async () => {
    const { store } = make();
    const key = bucket();
    const stale = token(await store.claim(key, "fp", 1));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const current = token(await store.claim(key, "fp", 10));
    expect(current).not.toBe(stale);
    // The first request outlived its lock: what it finishes must not free nor overwrite the second's.
    await store.release(key, stale);
    await store.complete(key, stale, "fp", { ...response, body: "stale" }, 60);
    expect(await store.claim(key, "fp", 10)).toEqual({ claimed: false, record: { state: "running", fingerprint: "fp" } });
    await store.complete(key, current, "fp", response, 60);
    await store.release(key, current);
    await store.complete(key, stale, "fp", { ...response, body: "stale" }, 60);
    expect(await store.claim(key, "fp", 10)).toEqual({ claimed: false, record: { state: "done", fingerprint: "fp", response } });
  });

  it("records a finished response over a lock that expired unclaimed, so that a replay does not run again", async () => {
    const { store } = make();
    const key = bucket();
    const expired = token(await store.claim(key, "fp", 1));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await store.complete(key, expired, "fp", response, 60);
    expect(await store.claim(key, "fp", 10)).toEqual({ claimed: false, record: { state: "done", fingerprint: "fp", response } });
  });

  // An erasure deletes the voter's records by their scope (owner-api-v3.md, Rules 3).
  it("forgetScope deletes every record of one scope, running locks included, and none of another", async () => {
    const { store } = make();
    const scope = `7:${bucket()}`;
    const [finished, running] = [`${scope}:a`, `${scope}:b`];
    // Other scopes: another voter, one whose name extends this one, one nested in it.
    const others = [`7:${bucket()}:a`, `${scope}x:a`, `${scope}:token:a`];
    for (const key of [finished, ...others]) await store.complete(key, token(await store.claim(key, "fp", 10)), "fp", response, 60);
    token(await store.claim(running, "fp", 10));
    expect(await store.forgetScope(scope)).toBe(2);
    token(await store.claim(finished, "fp", 10));
    token(await store.claim(running, "fp", 10));
    for (const key of others) {
      expect(await store.claim(key, "fp", 10)).toEqual({ claimed: false, record: { state: "done", fingerprint: "fp", response } });
    }
    expect(await store.forgetScope(`7:${bucket()}`)).toBe(0);
  });

  it("a claim made before forgetScope cannot record its answer; a claim after it records as usual", async () => {
    const { store } = make();
    const scope = `7:${bucket()}`;
    const key = `${scope}:a`;
    const running = token(await store.claim(key, "fp", 10));
    await store.forgetScope(scope);
    // The request that was running finishes after the erasure: its answer is not kept.
    await store.complete(key, running, "fp", response, 60);
    const fresh = token(await store.claim(key, "fp", 10));
    await store.complete(key, running, "fp", response, 60);
    expect(await store.claim(key, "fp", 10)).toEqual({ claimed: false, record: { state: "running", fingerprint: "fp" } });
    await store.complete(key, fresh, "fp", response, 60);
    expect(await store.claim(key, "fp", 10)).toEqual({ claimed: false, record: { state: "done", fingerprint: "fp", response } });
  });
});

describe.runIf(redis)("redis idempotency scope index", () => {
  it("lives as long as the scope's newest record, and goes with forgetScope", async () => {
    const store = new RedisIdempotencyStore(redis!, logger);
    const scope = `7:${randomBytes(6).toString("hex")}`;
    const key = `${scope}:a`;
    const claim = await store.claim(key, "fp", 10);
    expect(claim.claimed).toBe(true);
    await store.complete(key, (claim as { token: string }).token, "fp", { status: 201, headers: {}, body: "{}" }, 7200);
    expect(await redis!.ttl(`idem-scope:${scope}`)).toBeGreaterThanOrEqual(7199);
    expect(await redis!.zrange(`idem-scope:${scope}`, "0", "-1")).toHaveLength(1);
    expect(await store.forgetScope(scope)).toBe(1);
    expect(await redis!.exists(`idem-scope:${scope}`, `idem:${key}`)).toBe(0);
  });
});

describe.runIf(redis)("redis content revisions", () => {
  it("a revision lost with Redis's memory is replaced by a new one, never by an earlier one", async () => {
    const limiter = new RedisRateLimiter(redis!, logger);
    const projectId = randomBytes(4).readUInt32BE() >>> 2;
    const read = async () => (await limiter.consumeReadingRevisions("b", 10, 60, projectId)).revisions?.content ?? null;
    const seen = new Set<string | null>();
    seen.add(await read());
    await limiter.bump(projectId);
    seen.add(await read());
    await redis!.del(`rev:project:${projectId}`);
    const after = await read();
    expect(after).not.toBeNull();
    expect(seen.has(after)).toBe(false);
  });
});

describe("redis store failure", () => {
  it("the limiter falls back to the per-process implementation; the idempotency store refuses and claims nothing anywhere", async () => {
    const dead = connectRedis("redis://127.0.0.1:1", 100);
    dead.on("error", () => {});
    const limiter = new RedisRateLimiter(dead, logger);
    const store = new RedisIdempotencyStore(dead, logger);
    const first = await limiter.consumeReadingRevisions("x", 2, 60, 1);
    expect(first).toEqual({ rate: expect.objectContaining({ limit: 2, remaining: 1, allowed: true }), revisions: null });
    expect(await limiter.bump(1)).toBe(false);
    // Never sent (no connection, no offline queue): certainly not applied.
    for (let i = 0; i < 2; i++) {
      const refused = await store.claim("k", "fp", 10).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(IdempotencyStoreUnavailable);
      expect((refused as IdempotencyStoreUnavailable).claimMayExist).toBe(false);
    }
    await expect(store.release("k", "t")).rejects.toBeInstanceOf(IdempotencyStoreUnavailable);
    await store.close();
    dead.disconnect();
  });
});
