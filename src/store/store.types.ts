/**
 * What instances share through Redis (docs/architecture.md, "What runs"): rate-limit counters,
 * projects' content
 * revisions and idempotency records. Each has a Redis and an in-process implementation; the
 * counters and the revisions share one adapter (and one round trip per keyed request).
 */

/** A content revision `epoch:seq`: `epoch` names one run of the counter, `seq` counts its writes. */
export interface RevisionPosition {
  epoch: string;
  seq: number;
}

/** The parts of `epoch:seq`, or null for a revision of another form (only equal to itself). */
export function parseRevision(revision: string): RevisionPosition | null {
  const colon = revision.lastIndexOf(":");
  if (colon <= 0) return null;
  const seq = Number(revision.slice(colon + 1));
  return Number.isSafeInteger(seq) && seq >= 0 ? { epoch: revision.slice(0, colon), seq } : null;
}

/** Change records a store keeps per project (a process that needs older ones rebuilds instead). */
export const CHANGES_KEPT = 1000;

export interface RateLimitResult {
  /** The budget this request was counted against. */
  limit: number;
  /** What is left of it after this request (never negative). */
  remaining: number;
  /** When the window refills, Unix time in seconds. */
  resetAt: number;
  allowed: boolean;
}

/**
 * A project's revisions in the shared store: opaque tokens, each replaced by every change it
 * tracks. `content` changes with every write that changes what a read shows (the shared read
 * cache keys answers by it); `lookups` changes only when an owner changes what instances cache
 * about the project beyond its content (keys, settings, boards, voters' flags).
 */
export interface ProjectRevisions {
  content: string;
  lookups: string;
}

/**
 * Per-key request budgets in fixed windows (contract, "Limits").
 */
export interface RateLimiter {
  /** Counts one request against `bucket` in a fixed window of `windowSeconds`. */
  consume(bucket: string, limit: number, windowSeconds: number): Promise<RateLimitResult>;
  /**
   * consume() and the revisions of project `projectId` in the same round trip (docs/architecture.md,
   * "Data rules": one Redis round trip per keyed request); revisions are null when the shared store
   * did not
   * answer (the count then comes from the per-process fallback). A project without revisions
   * gets fresh ones.
   */
  consumeReadingRevisions(
    bucket: string,
    limit: number,
    windowSeconds: number,
    projectId: number,
  ): Promise<{ rate: RateLimitResult; revisions: ProjectRevisions | null }>;
  close(): Promise<void>;
}

/**
 * What a write changed, recorded with the content revision it gave the project
 * (src/lib/data/read-dependencies.ts decides which cached answers it retires): `all`, or a vote
 * cast or withdrawn with the feature's counters after it (`trending_score` null once it holds no
 * vote), `voterCountMoved`, whether the project's voter_count moved with it (the voter's first
 * vote or last withdrawal), and where the feature stands (`boardId`, `columnId`, `status`,
 * `tagIds`: which listings can show it). A record without an optional field (written before it
 * existed) counts as moving the voter count, the score, and as listed everywhere.
 */
export type ContentChange =
  | { kind: "all" }
  | {
      kind: "vote";
      featureId: number;
      cast: boolean;
      vote_count: number;
      weighted_score: number;
      trending_score?: number | null;
      voterCountMoved?: boolean;
      boardId?: number;
      columnId?: number | null;
      status?: string;
      tagIds?: number[];
    };

/**
 * What ContentRevisions.bump did: with `lookups`, the lookups revision it replaced (`previous`,
 * null when the project had none) and the one it set (`current`), so the writer can record its
 * own change as seen (SeenLookupRevisions.advanced) instead of reloading its lookups again.
 */
export interface Bumped {
  lookups: { previous: string | null; current: string } | null;
}

/**
 * Retires cached answers and lookups on every instance: any write path, public or owner, calls
 * `bump` once after its change committed (docs/architecture.md, "Per-request services").
 */
export interface ContentRevisions {
  /**
   * Gives project `projectId` a new content revision (`epoch:seq`, seq one more than before),
   * recording `change` (default `all`) with it, and with `lookups` a new lookups revision too
   * (after an owner change to keys, settings, boards or voters). Resolves to what it replaced
   * (Bumped), or false when the shared store did not answer, so the caller can drop what it
   * cached locally.
   */
  bump(projectId: number, options?: { lookups?: boolean; change?: ContentChange }): Promise<Bumped | false>;
  /**
   * The changes recorded after content revision `from` up to and including `to` (both
   * `epoch:seq` of one epoch), oldest first; null when they are not all kept any more (the last
   * CHANGES_KEPT per project are), the store did not answer, or the epochs differ. A store
   * without it keeps no change records: every change then retires every answer.
   */
  changesBetween?(projectId: number, from: string, to: string): Promise<ContentChange[] | null>;
}

/**
 * Whole read answers shared by the instances (docs/decisions.md, "Caching"), so that a page is
 * built once per
 * change in the cluster rather than once per instance: the shared read cache looks here on a
 * local miss and stores what it built. Values are opaque text (the cache's own JSON).
 */
export interface SharedAnswers {
  /**
   * The answer stored under `key` (null when none), and in the same round trip a claim on its
   * build at one revision (`lease`, held `leaseMs` ms): true when this caller got the claim.
   * Throws when the store does not answer.
   */
  getOrClaim(key: string, lease: string, leaseMs: number): Promise<{ value: string | null; claimed: boolean }>;
  /** Stores `value` under `key` for `ttlSeconds`. Throws when the store does not answer. */
  put(key: string, value: string, ttlSeconds: number): Promise<void>;
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
 * The shared idempotency store did not answer (docs/architecture.md, "Data rules": the claim never
 * falls back to per-process memory). `claimMayExist` is true when the command may have reached the
 * store
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

/**
 * The scope of idempotency record `key`: the key up to its last `:` (the middleware writes
 * `<project>:<scope>:<digest>`, src/middleware/idempotency.ts), or the whole key when it has none.
 */
export function idempotencyScopeOf(key: string): string {
  const colon = key.lastIndexOf(":");
  return colon < 0 ? key : key.slice(0, colon);
}

/**
 * How long past its lock a claim's place in its scope's index is kept (seconds): a finished
 * record written after the lock expired (a request that outran it, or a write retried for
 * COMPLETE_RETRY_MS) is still taken within this time, and refused after forgetScope.
 */
export const SCOPE_GRACE_SECONDS = 3600;

/**
 * Records are grouped by scope (idempotencyScopeOf: project and voter, or project and owner), so
 * that an erasure can delete a voter's records exactly (owner-api-v3.md, Rules 3).
 */
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
  /**
   * Deletes every record of `scope` (idempotencyScopeOf of its key), running locks included, in
   * one step, and refuses from then on the finished record of any claim made before (complete
   * does nothing), so a request that was running cannot store its answer afterwards. A later
   * claim of the scope starts afresh. Resolves to the number of records deleted. Throws
   * IdempotencyStoreUnavailable when the shared store did not answer (then it may or may not
   * have been applied, whole).
   */
  forgetScope(scope: string): Promise<number>;
  close(): Promise<void>;
}
