/**
 * Redis implementations shared by every instance (design.md). Each call has a short timeout
 * and no offline queue. When Redis fails, the rate limiter falls back to the in-process
 * implementation (fail open to a per-process limit); the idempotency store never does (a
 * request whose claim cannot be made shared does not run): it throws
 * IdempotencyStoreUnavailable. Either logs a warning at most every 10 seconds.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import { MemoryRateLimiter } from "./memory.ts";
import type { ContentRevisions, ProjectRevisions, RateLimiter, RateLimitResult } from "./store.types.ts";

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

/** Logs a Redis failure at most every 10 seconds (an outage would otherwise log every request). */
export class FailureLog {
  private lastWarnAt = 0;
  constructor(
    private readonly logger: Logger,
    private readonly message: string,
  ) {}
  warn(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarnAt < 10_000) return;
    this.lastWarnAt = now;
    this.logger.warn({ err: error instanceof Error ? error.message : String(error) }, this.message);
  }
}

// One round trip: count the request and set the window's expiry on its first use.
const CONSUME_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return count`;

// The same, and the content and lookups revisions KEYS[2] and KEYS[3]: a scope without one
// (never written, expired, or Redis restarted empty) gets a fresh random token (ARGV[2] with a
// suffix), so a revision is never reused.
const CONSUME_READ_REVISION_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
local revision = redis.call('GET', KEYS[2])
if not revision then
  revision = ARGV[2] .. 'c'
  redis.call('SET', KEYS[2], revision, 'EX', ARGV[3])
end
local lookups = redis.call('GET', KEYS[3])
if not lookups then
  lookups = ARGV[2] .. 'l'
  redis.call('SET', KEYS[3], lookups, 'EX', ARGV[3])
end
return {count, revision, lookups}`;

/** Revisions outlive any cached response by far; an expired one is simply replaced. */
const REVISION_TTL_SECONDS = 86_400;

type ScriptedRedis = {
  fbConsume(key: string, ttl: number): Promise<number>;
  fbConsumeReadRevision(
    key: string,
    revisionKey: string,
    lookupsKey: string,
    ttl: number,
    fresh: string,
    revisionTtl: number,
  ): Promise<[number, string, string]>;
};

/** The Redis keys of a project's revisions. */
function revisionKeys(projectId: number): { content: string; lookups: string } {
  return { content: `rev:project:${projectId}`, lookups: `lrev:project:${projectId}` };
}

/**
 * Rate-limit counters and content revisions in Redis, behind one adapter so that a keyed
 * request reads both in one round trip (consumeReadingRevisions).
 */
export class RedisRateLimiter implements RateLimiter, ContentRevisions {
  private readonly fallback: MemoryRateLimiter;
  private readonly failures: FailureLog;

  /**
   * `fallbackFactor` scales each budget while Redis does not answer (RATE_LIMIT_FALLBACK_FACTOR);
   * `now` (Unix milliseconds) places requests in windows, for this adapter and its fallback.
   */
  constructor(
    private readonly redis: Redis,
    logger: Logger,
    private readonly fallbackFactor = 1,
    private readonly now: () => number = Date.now,
  ) {
    this.fallback = new MemoryRateLimiter(now);
    this.failures = new FailureLog(logger, "rate limiter: Redis unavailable, using the per-process fallback");
    redis.defineCommand("fbConsume", { numberOfKeys: 1, lua: CONSUME_SCRIPT });
    redis.defineCommand("fbConsumeReadRevision", { numberOfKeys: 3, lua: CONSUME_READ_REVISION_SCRIPT });
  }

  private window(windowSeconds: number): { window: number; resetAt: number } {
    const window = Math.floor(this.now() / 1000 / windowSeconds);
    return { window, resetAt: (window + 1) * windowSeconds };
  }

  private async fallbackConsume(error: unknown, bucket: string, limit: number, windowSeconds: number): Promise<RateLimitResult> {
    this.failures.warn(error);
    const local = await this.fallback.consume(bucket, Math.max(1, Math.floor(limit * this.fallbackFactor)), windowSeconds);
    return { ...local, limit };
  }

  async consume(bucket: string, limit: number, windowSeconds: number): Promise<RateLimitResult> {
    const { window, resetAt } = this.window(windowSeconds);
    try {
      const count = Number(await (this.redis as unknown as ScriptedRedis).fbConsume(`rl:${bucket}:${window}`, windowSeconds + 1));
      return { limit, remaining: Math.max(0, limit - count), resetAt, allowed: count <= limit };
    } catch (error) {
      return this.fallbackConsume(error, bucket, limit, windowSeconds);
    }
  }

  async consumeReadingRevisions(
    bucket: string,
    limit: number,
    windowSeconds: number,
    projectId: number,
  ): Promise<{ rate: RateLimitResult; revisions: ProjectRevisions | null }> {
    const { window, resetAt } = this.window(windowSeconds);
    const keys = revisionKeys(projectId);
    try {
      const reply = await (this.redis as unknown as ScriptedRedis).fbConsumeReadRevision(
        `rl:${bucket}:${window}`,
        keys.content,
        keys.lookups,
        windowSeconds + 1,
        randomUUID(),
        REVISION_TTL_SECONDS,
      );
      const count = Number(reply[0]);
      return {
        rate: { limit, remaining: Math.max(0, limit - count), resetAt, allowed: count <= limit },
        revisions: { content: String(reply[1]), lookups: String(reply[2]) },
      };
    } catch (error) {
      // A per-process revision would not see other instances' writes: no revision, no caching.
      return { rate: await this.fallbackConsume(error, bucket, limit, windowSeconds), revisions: null };
    }
  }

  async bump(projectId: number, options: { lookups?: boolean } = {}): Promise<boolean> {
    const keys = revisionKeys(projectId);
    try {
      if (options.lookups) {
        // One round trip; both keys replaced together.
        const replies = await this.redis
          .multi()
          .set(keys.content, randomUUID(), "EX", REVISION_TTL_SECONDS)
          .set(keys.lookups, randomUUID(), "EX", REVISION_TTL_SECONDS)
          .exec();
        const failed = replies?.find(([error]) => error)?.[0];
        if (!replies || failed) throw failed ?? new Error("transaction discarded");
      } else {
        await this.redis.set(keys.content, randomUUID(), "EX", REVISION_TTL_SECONDS);
      }
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
