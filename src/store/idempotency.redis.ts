/**
 * The idempotency store on Redis, shared by every instance (docs/architecture.md, "Data rules":
 * "The idempotency claim never falls back to per-process memory: a request whose claim cannot
 * be made shared does not run"). Each record is one key `idem:<key>` holding JSON: a running lock
 * `{state:"running", fingerprint, token}` (token: random, one per claim) or the finished
 * `{state:"done", fingerprint, response}`.
 *
 * Every step is one Lua script, so it is atomic and one round trip:
 * - claim: set the lock if the key is empty, else return what is there;
 * - complete: write the finished record only over this claim's own lock or an empty key;
 * - release: delete only this claim's own lock.
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
  type StoredResponse,
} from "./store.types.ts";

// KEYS[1] record; ARGV[1] the running lock, ARGV[2] its lifetime in seconds.
const CLAIM_SCRIPT = `
local existing = redis.call('GET', KEYS[1])
if existing then return existing end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return false`;

// KEYS[1] record; ARGV[1] this claim's lock, ARGV[2] the finished record, ARGV[3] its lifetime.
// Over an empty key too: the lock expired (or Redis lost it) and nobody claimed since, so the
// finished record still spares the next replay a second execution. An earlier attempt that
// timed out may have written it already: then nothing to do. 1 written (now or before), 0 refused.
const COMPLETE_SCRIPT = `
local existing = redis.call('GET', KEYS[1])
if existing == ARGV[2] then return 1 end
if existing and existing ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
return 1`;

// KEYS[1] record; ARGV[1] this claim's lock.
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

type ScriptedRedis = {
  fbIdemClaim(key: string, lock: string, lockSeconds: number): Promise<string | null>;
  fbIdemComplete(key: string, lock: string, record: string, ttlSeconds: number): Promise<number>;
  fbIdemRelease(key: string, lock: string): Promise<number>;
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
    redis.defineCommand("fbIdemClaim", { numberOfKeys: 1, lua: CLAIM_SCRIPT });
    redis.defineCommand("fbIdemComplete", { numberOfKeys: 1, lua: COMPLETE_SCRIPT });
    redis.defineCommand("fbIdemRelease", { numberOfKeys: 1, lua: RELEASE_SCRIPT });
    this.scripts = redis as unknown as ScriptedRedis;
  }

  private redisKey(key: string): string {
    return `idem:${key}`;
  }

  async claim(key: string, fingerprint: string, lockSeconds: number): Promise<ClaimResult> {
    const lock = JSON.stringify({ state: "running", fingerprint, token: randomUUID() });
    let existing: string | null;
    try {
      existing = await this.scripts.fbIdemClaim(this.redisKey(key), lock, lockSeconds);
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
    const written = await this.scripts.fbIdemComplete(this.redisKey(key), lock, record, ttlSeconds);
    if (Number(written) === 0) {
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
      await this.scripts.fbIdemRelease(this.redisKey(key), token);
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
