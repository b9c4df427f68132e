/**
 * The Redis idempotency store when Redis is slow or drops the connection (docs/architecture.md,
 * "Data rules": the claim never falls back to per-process memory). Redis is reached through a
 * loopback proxy that holds
 * or drops the bytes, so that a command times out with a known fate. Runs when REDIS_URL is set.
 */
import { randomBytes } from "node:crypto";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DelayProxy, startDelayProxy } from "../../test/resilience/support/delay-proxy.ts";
import { waitUntil } from "../../test/resilience/support/processes.ts";
import { RedisIdempotencyStore } from "./idempotency.redis.ts";
import { connectRedis } from "./redis.ts";
import { IdempotencyStoreUnavailable } from "./store.types.ts";

/** Warnings the store logged (a lost lock would show here). */
const logged: string[] = [];
const logger = pino({ level: "warn" }, { write: (line: string) => logged.push(JSON.parse(line).msg) });
const redisUrl = process.env.REDIS_URL;
const prefix = `fbtest:${randomBytes(4).toString("hex")}:`;
const response = { status: 201, headers: { "Content-Type": "application/json" }, body: '{"data":{"id":7}}' };

describe.runIf(redisUrl)("redis idempotency store, Redis slow or cut off", () => {
  let proxy: DelayProxy;
  let direct: ReturnType<typeof connectRedis>;
  let slow: ReturnType<typeof connectRedis>;
  let store: RedisIdempotencyStore;
  const key = () => `k-${randomBytes(6).toString("hex")}`;
  const stored = async (k: string) => {
    const raw = await direct.get(`idem:${k}`);
    return raw === null ? null : JSON.parse(raw);
  };
  /** Resolves once the slow connection has answered everything sent before (Redis keeps order). */
  const drained = () => waitUntil("the proxied connection to answer", async () => (await slow.ping()) === "PONG", 10_000, 50);

  beforeAll(async () => {
    const url = new URL(redisUrl!);
    proxy = await startDelayProxy(Number(url.port || 6379), url.hostname);
    direct = connectRedis(redisUrl!, 2000, prefix);
    slow = connectRedis(proxy.url, 150, prefix);
    slow.on("error", () => {});
    await waitUntil("the proxied client to connect", async () => (await slow.ping()) === "PONG", 10_000, 50);
    store = new RedisIdempotencyStore(slow, logger);
  });
  afterAll(async () => {
    await store?.close();
    slow?.disconnect();
    direct?.disconnect();
    await proxy?.close();
  });

  it("refuses a claim whose answer did not come in time as possibly made, and frees the lock it left once Redis catches up", async () => {
    const k = key();
    proxy.pause();
    const refused = await store.claim(k, "fp", 30).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(IdempotencyStoreUnavailable);
    expect((refused as IdempotencyStoreUnavailable).claimMayExist).toBe(true);
    expect(await stored(k)).toBeNull(); // nothing reached Redis yet: the fate was unknown
    proxy.resume();
    await drained();
    // The claim was applied late, then released after it: the key is free, not locked for 30 s.
    expect(await stored(k)).toBeNull();
    expect((await store.claim(k, "fp", 30)).claimed).toBe(true);
  });

  it("keeps the lock when the finished record cannot be written, and writes it once Redis answers again", async () => {
    const k = key();
    const claim = await store.claim(k, "fp", 30);
    expect(claim.claimed).toBe(true);
    proxy.pause();
    const failed = await store.complete(k, (claim as { token: string }).token, "fp", response, 60).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(IdempotencyStoreUnavailable);
    proxy.resetConnections(); // the write is lost with the connection, never applied
    proxy.resume();
    // Meanwhile the lock holds: a replay sees a running request, never an empty key.
    expect(await stored(k)).toMatchObject({ state: "running", fingerprint: "fp" });
    expect(store.pendingCount).toBe(1);
    await waitUntil("the finished record to be written", async () => (await stored(k))?.state === "done", 15_000, 100);
    expect(await stored(k)).toEqual({ state: "done", fingerprint: "fp", response });
    expect(store.pendingCount).toBe(0);
    expect(await direct.ttl(`idem:${k}`)).toBeGreaterThan(30);
  });

  it("a finished record written twice (a retry after a timeout that was applied late) is no lost lock", async () => {
    const k = key();
    const claim = await store.claim(k, "fp", 30);
    const token = (claim as { token: string }).token;
    logged.length = 0;
    await store.complete(k, token, "fp", response, 60);
    await store.complete(k, token, "fp", response, 60);
    expect(logged).toEqual([]);
    // A different claim's completion is refused, and said so.
    await store.complete(k, "another claim", "fp", { ...response, body: "other" }, 60);
    expect(await stored(k)).toEqual({ state: "done", fingerprint: "fp", response });
    expect(logged).toEqual([expect.stringContaining("lock expired")]);
  });

  it("refuses a claim as certainly not made when the connection is down (nothing was sent)", async () => {
    proxy.pause();
    proxy.resetConnections();
    await waitUntil("the client to see the connection gone", () => slow.status !== "ready", 5000, 5);
    const k = key();
    const refused = await store.claim(k, "fp", 30).catch((error: unknown) => error);
    proxy.resume();
    expect(refused).toBeInstanceOf(IdempotencyStoreUnavailable);
    expect((refused as IdempotencyStoreUnavailable).claimMayExist).toBe(false);
    await drained();
    expect(await stored(k)).toBeNull();
  });
});
