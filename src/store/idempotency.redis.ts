/**
 * The idempotency store on Redis, shared by every instance (docs/architecture.md, "Data rules":
 * "The idempotency claim never falls back to per-process memory: a request whose claim cannot
 * be made shared does not run"). Each record is one key `idem:<key>` holding JSON: a running lock
 * `{state:"running", fingerprint, token}` (token: random, one per claim) or the finished
 * `{state:"done", fingerprint, response}`; beside them, one sorted set per scope
 * (`idem-scope:<scope>`, idempotencyScopeOf) listing its records' keys.
 *
 * Every step is one Lua script, so it is atomic and one round trip:
 * - claim: set the lock if the key is empty, else return what is there;
 * - complete: write the finished record only over this claim's own lock or an empty key, and
 *   only while the key is in its scope's index;
 * - release: delete only this claim's own lock;
 * - forgetScope: delete every record of a scope (listed in the scope's index, below) at once.
 *
 * Failures (the connection has its own command timeout, REDIS_IDEMPOTENCY_TIMEOUT_MS):
 * - claim: throws IdempotencyStoreUnavailable; `claimMayExist` unless the command certainly
 *   never reached Redis. A claim that timed out may still be applied when Redis catches up,
 *   so a release of that claim's token follows it on the same connection (Redis runs one
 *   connection's commands in order): the lock does not block retries for its whole lifetime.
 * - complete: the work is done and its answer goes to the client, so the lock is kept (a
 *   replay meanwhile answers 409 idempotency_in_progress) and the finished record is written
 *   again in the background, with backoff, for up to COMPLETE_RETRY_MS; then it throws. Only if
 *   Redis stays unreachable past the lock's lifetime can a later replay run again.
 * - release: throws; the lock then expires by itself (a retry meanwhile answers 409).
 */
import { randomUUID } from "node:crypto";
import { type Redis, ReplyError } from "ioredis";
import type { Logger } from "pino";
import { FailureLog } from "./redis.ts";
import {
  type ClaimResult,
  type IdempotencyRecord,
  type IdempotencyStore,
  IdempotencyStoreUnavailable,
  idempotencyScopeOf,
  SCOPE_GRACE_SECONDS,
  type StoredResponse,
} from "./store.types.ts";

// Each claim also records its key in its scope's index (`idem-scope:<scope>`, a sorted set:
// member the record's Redis key, score when its place lapses, in ms), so that forgetScope
// deletes exactly the scope's records, and complete writes only a key still in the index. Lapsed
// places are pruned at each claim of the scope; the index expires with its last place.

// KEYS[1] record, KEYS[2] its scope's index; ARGV[1] the running lock, ARGV[2] its lifetime in
// seconds, ARGV[3] now (ms), ARGV[4] SCOPE_GRACE_SECONDS.
const CLAIM_SCRIPT = `
local existing = redis.call('GET', KEYS[1])
if existing then return existing end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
local keep = tonumber(ARGV[2]) + tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
redis.call('ZADD', KEYS[2], tonumber(ARGV[3]) + keep * 1000, KEYS[1])
if redis.call('TTL', KEYS[2]) < keep then redis.call('EXPIRE', KEYS[2], keep) end
return false`;

// KEYS[1] record, KEYS[2] its scope's index; ARGV[1] this claim's lock, ARGV[2] the finished
// record, ARGV[3] its lifetime, ARGV[4] now (ms). Over an empty key too: the lock expired (or
// Redis lost it) and nobody claimed since, so the finished record still spares the next replay
// a second execution. An earlier attempt that timed out may have written it already: then
// nothing to do. 1 written (now or before), 0 refused (another claim holds the key), 2 refused
// (the key left its scope's index: the scope was forgotten since the claim).
const COMPLETE_SCRIPT = `
if not redis.call('ZSCORE', KEYS[2], KEYS[1]) then return 2 end
local existing = redis.call('GET', KEYS[1])
if existing == ARGV[2] then return 1 end
if existing and existing ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
redis.call('ZADD', KEYS[2], tonumber(ARGV[4]) + tonumber(ARGV[3]) * 1000, KEYS[1])
if redis.call('TTL', KEYS[2]) < tonumber(ARGV[3]) then redis.call('EXPIRE', KEYS[2], ARGV[3]) end
return 1`;

// KEYS[1] record, KEYS[2] its scope's index; ARGV[1] this claim's lock.
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('ZREM', KEYS[2], KEYS[1])
  return redis.call('DEL', KEYS[1])
end
return 0`;

// KEYS[1] a scope's index. Deletes every record it lists, then the index; the number deleted.
// The records are not declared in KEYS (they are read from the index): fine on one Redis (the
// deployment's, operations.md), not on Redis Cluster, where they would need one hash slot.
const FORGET_SCRIPT = `
local deleted = 0
for _, key in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do deleted = deleted + redis.call('DEL', key) end
redis.call('DEL', KEYS[1])
return deleted`;

type ScriptedRedis = {
  fbIdemClaim(key: string, index: string, lock: string, lockSeconds: number, now: number, graceSeconds: number): Promise<string | null>;
  fbIdemComplete(key: string, index: string, lock: string, record: string, ttlSeconds: number, now: number): Promise<number>;
  fbIdemRelease(key: string, index: string, lock: string): Promise<number>;
  fbIdemForget(index: string): Promise<number>;
};

/** How long a finished record that could not be written is retried in the background. */
export const COMPLETE_RETRY_MS = 60_000;
/** At most this many finished records wait for Redis per process (bounded memory). */
const MAX_PENDING = 1000;
const RETRY_DELAYS_MS = [100, 250, 500, 1000, 2000];

interface PendingCompletion {
  lock: string;
  record: string;
  ttlSeconds: number;
  giveUpAt: number;
  attempt: number;
  timer?: NodeJS.Timeout;
}

/**
 * Maps a failed Redis call to IdempotencyStoreUnavailable. Certainly not applied: the command
 * was never written (no connection; there is no offline queue) or Redis answered an error
 * (a script that fails writes nothing here). Anything else (timeout, connection lost with the
 * command in flight) may have been applied.
 */
export function unavailable(error: unknown): IdempotencyStoreUnavailable {
  const notSent = error instanceof Error && error.message.startsWith("Stream isn't writeable");
  const refused = error instanceof (ReplyError as new () => Error);
  return new IdempotencyStoreUnavailable(!(notSent || refused), { cause: error });
}

export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly failures: FailureLog;
  private readonly pending = new Map<string, PendingCompletion>();
  private readonly scripts: ScriptedRedis;
  private closed = false;

  /** `redis` should be a connection of its own (connectRedis with REDIS_IDEMPOTENCY_TIMEOUT_MS). */
  constructor(
    redis: Redis,
    private readonly logger: Logger,
  ) {
    this.failures = new FailureLog(logger, "idempotency store: Redis unavailable, keyed writes are refused (409/500) until it answers");
    redis.defineCommand("fbIdemClaim", { numberOfKeys: 2, lua: CLAIM_SCRIPT });
    redis.defineCommand("fbIdemComplete", { numberOfKeys: 2, lua: COMPLETE_SCRIPT });
    redis.defineCommand("fbIdemRelease", { numberOfKeys: 2, lua: RELEASE_SCRIPT });
    redis.defineCommand("fbIdemForget", { numberOfKeys: 1, lua: FORGET_SCRIPT });
    this.scripts = redis as unknown as ScriptedRedis;
  }

  private redisKey(key: string): string {
    return `idem:${key}`;
  }

  private indexKey(scope: string): string {
    return `idem-scope:${scope}`;
  }

  async claim(key: string, fingerprint: string, lockSeconds: number): Promise<ClaimResult> {
    const lock = JSON.stringify({ state: "running", fingerprint, token: randomUUID() });
    let existing: string | null;
    try {
      existing = await this.scripts.fbIdemClaim(
        this.redisKey(key),
        this.indexKey(idempotencyScopeOf(key)),
        lock,
        lockSeconds,
        Date.now(),
        SCOPE_GRACE_SECONDS,
      );
    } catch (error) {
      this.failures.warn(error);
      const failure = unavailable(error);
      // Sent after the claim on the same connection, so Redis runs it after the claim.
      if (failure.claimMayExist) this.release(key, lock).catch(() => {});
      throw failure;
    }
    if (existing === null) return { claimed: true, token: lock };
    const { token: _token, ...record } = JSON.parse(existing) as IdempotencyRecord & { token?: string };
    return { claimed: false, record: record as IdempotencyRecord };
  }

  async complete(key: string, token: string, fingerprint: string, response: StoredResponse, ttlSeconds: number): Promise<void> {
    const record = JSON.stringify({ state: "done", fingerprint, response } satisfies IdempotencyRecord);
    try {
      await this.write(key, token, record, ttlSeconds);
    } catch (error) {
      this.failures.warn(error);
      this.retryLater(key, { lock: token, record, ttlSeconds, giveUpAt: Date.now() + COMPLETE_RETRY_MS, attempt: 0 });
      throw unavailable(error);
    }
  }

  private async write(key: string, lock: string, record: string, ttlSeconds: number): Promise<void> {
    const written = Number(
      await this.scripts.fbIdemComplete(this.redisKey(key), this.indexKey(idempotencyScopeOf(key)), lock, record, ttlSeconds, Date.now()),
    );
    // 2: the scope was forgotten (an erasure) while the request ran; its answer is not kept.
    if (written === 0) {
      // The lock expired while the request ran and another claim (or its record) took the key:
      // the request may have run twice. Longer than the lock's lifetime is the only way here.
      this.logger.warn({ key }, "idempotency lock expired before the request finished; its record was not written");
    }
  }

  private retryLater(key: string, pending: PendingCompletion): void {
    if (this.closed) return;
    const earlier = this.pending.get(key);
    if (earlier?.timer) clearTimeout(earlier.timer);
    if (!earlier && this.pending.size >= MAX_PENDING) {
      this.logger.error(
        { key },
        "idempotency store: too many finished records waiting for Redis; dropping one (its lock expires, a replay may run again)",
      );
      return;
    }
    this.pending.set(key, pending);
    const delay = RETRY_DELAYS_MS[Math.min(pending.attempt, RETRY_DELAYS_MS.length - 1)]!;
    pending.timer = setTimeout(() => {
      this.write(key, pending.lock, pending.record, pending.ttlSeconds).then(
        () => {
          if (this.pending.get(key) === pending) this.pending.delete(key);
        },
        (error) => {
          this.failures.warn(error);
          if (this.pending.get(key) !== pending) return;
          this.pending.delete(key);
          if (Date.now() >= pending.giveUpAt) {
            this.logger.error({ key }, "idempotency store: gave up writing a finished record (its lock expires, a replay may run again)");
            return;
          }
          this.retryLater(key, { ...pending, attempt: pending.attempt + 1, timer: undefined });
        },
      );
    }, delay);
    pending.timer.unref();
  }

  /** Finished records still waiting for Redis (for tests and shutdown). */
  get pendingCount(): number {
    return this.pending.size;
  }

  async release(key: string, token: string): Promise<void> {
    try {
      await this.scripts.fbIdemRelease(this.redisKey(key), this.indexKey(idempotencyScopeOf(key)), token);
    } catch (error) {
      this.failures.warn(error);
      throw unavailable(error);
    }
  }

  async forgetScope(scope: string): Promise<number> {
    // A finished record of the scope still waiting here for Redis would be refused anyway
    // (its key left the index); dropped now so that it is not even kept in memory.
    for (const [key, pending] of this.pending) {
      if (idempotencyScopeOf(key) !== scope) continue;
      clearTimeout(pending.timer);
      this.pending.delete(key);
    }
    try {
      return Number(await this.scripts.fbIdemForget(this.indexKey(scope)));
    } catch (error) {
      this.failures.warn(error);
      throw unavailable(error);
    }
  }

  /** One last attempt for every finished record still waiting, then stops retrying. */
  async close(): Promise<void> {
    this.closed = true;
    const waiting = [...this.pending];
    this.pending.clear();
    for (const [, pending] of waiting) clearTimeout(pending.timer);
    await Promise.allSettled(waiting.map(([key, pending]) => this.write(key, pending.lock, pending.record, pending.ttlSeconds)));
  }
}
