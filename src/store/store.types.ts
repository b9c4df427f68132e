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
  /**
   * The lookups revision of the same scope: changes only when the owner changes what instances
   * cache about a project beyond its content (keys, settings, boards, voters' flags). null as
   * `revision` is.
   */
  lookupsRevision: string | null;
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
   * Gives `scope` a new content revision (after a write to it), and with `lookups` a new lookups
   * revision too (after an owner write). Resolves false when the shared store did not answer, so
   * the caller can drop what it cached locally.
   */
  bumpRevision(scope: string, options?: { lookups?: boolean }): Promise<boolean>;
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

/**
 * `token` identifies this claim (an opaque string): completing or releasing the key takes it,
 * so that a request whose lock expired and was claimed again cannot overwrite or free the new
 * claim.
 */
export type ClaimResult = { claimed: true; token: string } | { claimed: false; record: IdempotencyRecord };

/**
 * The shared idempotency store did not answer (design.md: the claim never falls back to
 * per-process memory). `claimMayExist` is true when the command may have reached the store
 * (timed out, or the connection dropped with it in flight): a lock may then exist, so the
 * request is answered 409 idempotency_in_progress; false when it certainly changed nothing
 * (never sent, or refused by the store), answered 500 internal.
 */
export class IdempotencyStoreUnavailable extends Error {
  constructor(
    readonly claimMayExist: boolean,
    options?: { cause?: unknown },
  ) {
    super(
      claimMayExist ? "idempotency store: no answer, the command may have been applied" : "idempotency store: command not applied",
      options,
    );
    this.name = "IdempotencyStoreUnavailable";
  }
}

export interface IdempotencyStore {
  /**
   * Atomically claims `key` for a running request (lock expires after `lockSeconds`), or
   * returns the record already there, in one step. Throws IdempotencyStoreUnavailable when the
   * shared store does not answer; never claims anywhere else.
   */
  claim(key: string, fingerprint: string, lockSeconds: number): Promise<ClaimResult>;
  /**
   * Replaces this claim's lock with the finished response, kept `ttlSeconds`: only while the
   * key holds this claim's lock, or nothing (a lock that expired unclaimed); never over another
   * claim or a finished record. Throws IdempotencyStoreUnavailable when the store did not
   * answer; the store then keeps trying in the background (see the implementation).
   */
  complete(key: string, token: string, fingerprint: string, response: StoredResponse, ttlSeconds: number): Promise<void>;
  /**
   * Drops this claim's lock so that the same request may be retried (after a 5xx, or a claim
   * whose answer was lost). Never drops another claim's lock or a finished record. Throws
   * IdempotencyStoreUnavailable when the store did not answer (the lock then expires by itself).
   */
  release(key: string, token: string): Promise<void>;
  close(): Promise<void>;
}
