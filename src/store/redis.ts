/**
 * Redis implementations shared by every instance (design.md). Each call has a short timeout
 * and no offline queue; when Redis fails the call falls back to the in-process implementation
 * (fail open to a per-process limit) and a warning is logged at most every 10 seconds.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import { MemoryIdempotencyStore, MemoryRateLimiter } from "./memory.ts";
import type { ClaimResult, IdempotencyRecord, IdempotencyStore, RateLimiter, RateLimitResult, StoredResponse } from "./store.types.ts";

/** Opens a client that never queues commands while disconnected and gives up quickly. */
export function connectRedis(url: string, commandTimeoutMs: number, keyPrefix = "fb:"): Redis {
  return new Redis(url, {
    keyPrefix,
    commandTimeout: commandTimeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    // Keep trying to come back, at most every 2 s, without piling up commands meanwhile.
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
    lazyConnect: false,
  });
}

class FailureLog {
  private lastWarnAt = 0;
  constructor(private readonly logger: Logger, private readonly what: string) {}
  warn(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarnAt < 10_000) return;
    this.lastWarnAt = now;
    this.logger.warn({ err: error instanceof Error ? error.message : String(error) }, `${this.what}: Redis unavailable, using the per-process fallback`);
  }
}

// One round trip: count the request and set the window's expiry on its first use.
const CONSUME_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return count`;

// The same, and the content revision of KEYS[2]: a scope without one (never written, expired,
// or Redis restarted empty) gets the fresh random token ARGV[2], so a revision is never reused.
const CONSUME_READ_REVISION_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
local revision = redis.call('GET', KEYS[2])
if not revision then
  revision = ARGV[2]
  redis.call('SET', KEYS[2], revision, 'EX', ARGV[3])
end
return {count, revision}`;

/** Revisions outlive any cached response by far; an expired one is simply replaced. */
const REVISION_TTL_SECONDS = 86_400;

type ScriptedRedis = {
  fbConsume(key: string, ttl: number): Promise<number>;
  fbConsumeReadRevision(key: string, revisionKey: string, ttl: number, fresh: string, revisionTtl: number): Promise<[number, string]>;
};

export class RedisRateLimiter implements RateLimiter {
  private readonly fallback = new MemoryRateLimiter();
  private readonly failures: FailureLog;

  constructor(private readonly redis: Redis, logger: Logger, private readonly fallbackFactor = 1) {
    this.failures = new FailureLog(logger, "rate limiter");
    redis.defineCommand("fbConsume", { numberOfKeys: 1, lua: CONSUME_SCRIPT });
    redis.defineCommand("fbConsumeReadRevision", { numberOfKeys: 2, lua: CONSUME_READ_REVISION_SCRIPT });
  }

  async consume(bucket: string, limit: number, windowSeconds: number, revisionScope?: string): Promise<RateLimitResult> {
    const nowSeconds = Date.now() / 1000;
    const window = Math.floor(nowSeconds / windowSeconds);
    const resetAt = (window + 1) * windowSeconds;
    const redis = this.redis as unknown as ScriptedRedis;
    const counterKey = `rl:${bucket}:${window}`;
    try {
      let count: number;
      let revision: string | null = null;
      if (revisionScope === undefined) {
        count = Number(await redis.fbConsume(counterKey, windowSeconds + 1));
      } else {
        const reply = await redis.fbConsumeReadRevision(counterKey, `rev:${revisionScope}`, windowSeconds + 1, randomUUID(), REVISION_TTL_SECONDS);
        count = Number(reply[0]);
        revision = String(reply[1]);
      }
      return { limit, remaining: Math.max(0, limit - count), resetAt, allowed: count <= limit, revision };
    } catch (error) {
      this.failures.warn(error);
      const local = await this.fallback.consume(bucket, Math.max(1, Math.floor(limit * this.fallbackFactor)), windowSeconds);
      // A per-process revision would not see other instances' writes: no revision, no caching.
      return { ...local, limit, revision: null };
    }
  }

  async bumpRevision(scope: string): Promise<boolean> {
    try {
      await this.redis.set(`rev:${scope}`, randomUUID(), "EX", REVISION_TTL_SECONDS);
      return true;
    } catch (error) {
      this.failures.warn(error);
      return false;
    }
  }

  async close(): Promise<void> {
    await this.fallback.close();
  }
}

export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly fallback = new MemoryIdempotencyStore();
  private readonly failures: FailureLog;

  constructor(private readonly redis: Redis, logger: Logger) {
    this.failures = new FailureLog(logger, "idempotency store");
  }

  private redisKey(key: string): string {
    return `idem:${key}`;
  }

  async claim(key: string, fingerprint: string, lockSeconds: number): Promise<ClaimResult> {
    const record: IdempotencyRecord = { state: "running", fingerprint };
    try {
      const set = await this.redis.set(this.redisKey(key), JSON.stringify(record), "EX", lockSeconds, "NX");
      if (set === "OK") return { claimed: true };
      const existing = await this.redis.get(this.redisKey(key));
      return { claimed: false, record: existing ? (JSON.parse(existing) as IdempotencyRecord) : null };
    } catch (error) {
      this.failures.warn(error);
      return this.fallback.claim(key, fingerprint, lockSeconds);
    }
  }

  async complete(key: string, fingerprint: string, response: StoredResponse, ttlSeconds: number): Promise<void> {
    const record: IdempotencyRecord = { state: "done", fingerprint, response };
    try {
      await this.redis.set(this.redisKey(key), JSON.stringify(record), "EX", ttlSeconds);
    } catch (error) {
      this.failures.warn(error);
      await this.fallback.complete(key, fingerprint, response, ttlSeconds);
    }
  }

  async release(key: string): Promise<void> {
    try {
      await this.redis.del(this.redisKey(key));
    } catch (error) {
      this.failures.warn(error);
    }
    await this.fallback.release(key);
  }

  async close(): Promise<void> {
    await this.fallback.close();
  }
}
