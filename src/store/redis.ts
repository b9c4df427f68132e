/**
 * Redis implementations shared by every instance (docs/architecture.md, "Data rules"). Each call
 * has a short timeout
 * and no offline queue. When Redis fails, the rate limiter falls back to the in-process
 * implementation (fail open to a per-process limit); the idempotency store never does (a
 * request whose claim cannot be made shared does not run): it throws
 * IdempotencyStoreUnavailable. Either logs a warning at most every 10 seconds.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import { MemoryRateLimiter } from "./memory.ts";
import {
  type Bumped,
  CHANGES_KEPT,
  type ContentChange,
  type ContentRevisions,
  type ProjectRevisions,
  parseRevision,
  type RateLimiter,
  type RateLimitResult,
  type SharedAnswers,
} from "./store.types.ts";

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
// (never written, expired, or Redis restarted empty) gets a fresh random token (ARGV[2]; the
// content revision as seq 0 of that epoch), so a revision is never reused.
const CONSUME_READ_REVISION_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
local revision = redis.call('GET', KEYS[2])
if not revision then
  revision = ARGV[2] .. ':0'
  redis.call('SET', KEYS[2], revision, 'EX', ARGV[3])
end
local lookups = redis.call('GET', KEYS[3])
if not lookups then
  lookups = ARGV[2] .. 'l'
  redis.call('SET', KEYS[3], lookups, 'EX', ARGV[3])
end
return {count, revision, lookups}`;

// A new content revision (KEYS[1], `epoch:seq`) one seq after the current one, or seq 1 of a
// new epoch ARGV[1] when there is none (the change records of an old epoch are dropped), the
// change ARGV[2] recorded under it in KEYS[2] (sorted by seq, the last ARGV[4] kept), and with
// ARGV[5] not empty a new lookups revision KEYS[3]: one atomic step, so a reader that sees a
// revision can always read its change. Returns the new content revision and the lookups
// revision replaced (false when none was, or none was asked for).
const BUMP_SCRIPT = `
local current = redis.call('GET', KEYS[1])
local epoch, seq
if current then epoch, seq = string.match(current, '^(.+):(%d+)$') end
if not epoch then
  epoch = ARGV[1]
  seq = 0
  redis.call('DEL', KEYS[2])
end
seq = tonumber(seq) + 1
local revision = epoch .. ':' .. seq
redis.call('SET', KEYS[1], revision, 'EX', ARGV[3])
redis.call('ZADD', KEYS[2], seq, revision .. ' ' .. ARGV[2])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(tonumber(ARGV[4]) + 1))
redis.call('EXPIRE', KEYS[2], ARGV[3])
local previous = false
if ARGV[5] ~= '' then
  previous = redis.call('GET', KEYS[3])
  redis.call('SET', KEYS[3], ARGV[5], 'EX', ARGV[3])
end
return {revision, previous}`;

// The answer KEYS[1], and a claim KEYS[2] on its build (ARGV[1] ms) if nobody holds one.
const ANSWER_OR_CLAIM_SCRIPT = `
local value = redis.call('GET', KEYS[1])
local claimed = redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[1])
if claimed then return {value, 1} end
return {value, 0}`;

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
  fbBump(
    revisionKey: string,
    changesKey: string,
    lookupsKey: string,
    freshEpoch: string,
    change: string,
    ttl: number,
    kept: number,
    lookups: string,
  ): Promise<[string, string | null]>;
  fbAnswerOrClaim(key: string, lease: string, leaseMs: number): Promise<[string | null, number]>;
};

/** The Redis keys of a project's revisions. */
function revisionKeys(projectId: number): { content: string; lookups: string; changes: string } {
  return { content: `rev:project:${projectId}`, lookups: `lrev:project:${projectId}`, changes: `chg:project:${projectId}` };
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
    redis.defineCommand("fbBump", { numberOfKeys: 3, lua: BUMP_SCRIPT });
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

  async bump(projectId: number, options: { lookups?: boolean; change?: ContentChange } = {}): Promise<Bumped | false> {
    const keys = revisionKeys(projectId);
    const lookups = options.lookups ? randomUUID() : "";
    try {
      const [, previous] = await (this.redis as unknown as ScriptedRedis).fbBump(
        keys.content,
        keys.changes,
        keys.lookups,
        randomUUID(),
        JSON.stringify(options.change ?? { kind: "all" }),
        REVISION_TTL_SECONDS,
        CHANGES_KEPT,
        lookups,
      );
      return { lookups: lookups === "" ? null : { previous: previous ?? null, current: lookups } };
    } catch (error) {
      this.failures.warn(error);
      return false;
    }
  }

  async changesBetween(projectId: number, from: string, to: string): Promise<ContentChange[] | null> {
    const [a, b] = [parseRevision(from), parseRevision(to)];
    if (!a || !b || a.epoch !== b.epoch || a.seq > b.seq) return null;
    if (a.seq === b.seq) return [];
    try {
      const members = await this.redis.zrangebyscore(revisionKeys(projectId).changes, `(${a.seq}`, b.seq);
      if (members.length !== b.seq - a.seq) return null;
      const changes: ContentChange[] = [];
      for (const [i, member] of members.entries()) {
        const space = member.indexOf(" ");
        if (member.slice(0, space) !== `${b.epoch}:${a.seq + 1 + i}`) return null;
        changes.push(JSON.parse(member.slice(space + 1)) as ContentChange);
      }
      return changes;
    } catch (error) {
      this.failures.warn(error);
      return null;
    }
  }

  async close(): Promise<void> {
    await this.fallback.close();
  }
}

/** Read answers shared by the instances on Redis (SharedAnswers), keys under `ans:` and `lease:`. */
export class RedisSharedAnswers implements SharedAnswers {
  constructor(private readonly redis: Redis) {
    redis.defineCommand("fbAnswerOrClaim", { numberOfKeys: 2, lua: ANSWER_OR_CLAIM_SCRIPT });
  }

  async getOrClaim(key: string, lease: string, leaseMs: number): Promise<{ value: string | null; claimed: boolean }> {
    const [value, claimed] = await (this.redis as unknown as ScriptedRedis).fbAnswerOrClaim(`ans:${key}`, `lease:${lease}`, leaseMs);
    return { value: value ?? null, claimed: Number(claimed) === 1 };
  }

  async put(key: string, value: string, ttlSeconds: number): Promise<void> {
    await this.redis.set(`ans:${key}`, value, "EX", Math.max(1, Math.ceil(ttlSeconds)));
  }
}
