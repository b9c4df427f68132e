/**
 * The two things instances share through Redis (design.md): rate-limit counters and
 * idempotency records. Each has a Redis and an in-process implementation behind one interface.
 */

export interface RateLimitResult {
  /** The budget this request was counted against. */
  limit: number;
  /** What is left of it after this request (never negative). */
  remaining: number;
  /** When the window refills, Unix time in seconds. */
  resetAt: number;
  allowed: boolean;
  /**
   * The content revision of the scope passed to `consume` (an opaque token that changes with
   * every write to it), or null when none was asked for or the shared store did not answer.
   */
  revision: string | null;
}

/**
 * Rate-limit counters, and the content revision of each project: every keyed request needs
 * both, so they are read in one round trip (design.md: one Redis round trip per request). The
 * shared read cache (src/middleware/shared-read-cache.ts) keys responses by the revision.
 */
export interface RateLimiter {
  /**
   * Counts one request against `bucket` in a fixed window of `windowSeconds`; with
   * `revisionScope`, also returns that scope's content revision (one is created if it has none).
   */
  consume(bucket: string, limit: number, windowSeconds: number, revisionScope?: string): Promise<RateLimitResult>;
  /**
   * Gives `scope` a new content revision (after a write to it). Resolves false when the shared
   * store did not answer, so the caller can drop what it cached locally.
   */
  bumpRevision(scope: string): Promise<boolean>;
  close(): Promise<void>;
}

/** A response as recorded for replay: status, selected headers, exact body text. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type IdempotencyRecord =
  | { state: "running"; fingerprint: string }
  | { state: "done"; fingerprint: string; response: StoredResponse };

export type ClaimResult = { claimed: true } | { claimed: false; record: IdempotencyRecord | null };

export interface IdempotencyStore {
  /**
   * Atomically claims `key` for a running request (lock expires after `lockSeconds`), or
   * returns the record already there (null if it vanished between the two steps).
   */
  claim(key: string, fingerprint: string, lockSeconds: number): Promise<ClaimResult>;
  /** Replaces the lock with the finished response, kept `ttlSeconds`. */
  complete(key: string, fingerprint: string, response: StoredResponse, ttlSeconds: number): Promise<void>;
  /** Drops the lock so that the same request may be retried (after a 5xx). */
  release(key: string): Promise<void>;
  close(): Promise<void>;
}
