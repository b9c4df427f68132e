/**
 * In-process rate limiter and idempotency store: the embedded default (no REDIS_URL). The
 * rate limiter is also the fallback the Redis limiter uses while Redis does not answer; the
 * idempotency store never is (docs/architecture.md, "Data rules"). Exact within one process only.
 */
import { randomUUID } from "node:crypto";
import {
  type Bumped,
  CHANGES_KEPT,
  type ClaimResult,
  type ContentChange,
  type ContentRevisions,
  type IdempotencyRecord,
  type IdempotencyStore,
  idempotencyScopeOf,
  type ProjectRevisions,
  parseRevision,
  type RateLimiter,
  type RateLimitResult,
  SCOPE_GRACE_SECONDS,
  type StoredResponse,
} from "./store.types.ts";

interface Expiring<T> {
  value: T;
  expiresAt: number;
}

/** Map with per-entry expiry; expired entries are dropped on access and by a periodic sweep. */
class ExpiringMap<T> {
  private readonly entries = new Map<string, Expiring<T>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number) {
    this.sweeper = setInterval(() => this.sweep(), 30_000);
    this.sweeper.unref();
  }

  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: T, ttlMs: number): void {
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }

  clear(): void {
    clearInterval(this.sweeper);
    this.entries.clear();
  }
}

/** Counters and revisions of one process: the embedded default, and the Redis adapter's fallback. */
export class MemoryRateLimiter implements RateLimiter, ContentRevisions {
  private readonly counters: ExpiringMap<number>;
  private readonly revisions = new Map<number, ProjectRevisions>();
  /** Project -> seq -> change of its current epoch (the last CHANGES_KEPT). */
  private readonly changes = new Map<number, Map<number, ContentChange>>();

  constructor(private readonly now: () => number = Date.now) {
    this.counters = new ExpiringMap(now);
  }

  async consume(bucket: string, limit: number, windowSeconds: number): Promise<RateLimitResult> {
    const nowSeconds = this.now() / 1000;
    const window = Math.floor(nowSeconds / windowSeconds);
    const key = `${bucket}:${window}`;
    const count = (this.counters.get(key) ?? 0) + 1;
    const resetAt = (window + 1) * windowSeconds;
    this.counters.set(key, count, (resetAt - nowSeconds) * 1000 + 1000);
    return { limit, remaining: Math.max(0, limit - count), resetAt, allowed: count <= limit };
  }

  async consumeReadingRevisions(
    bucket: string,
    limit: number,
    windowSeconds: number,
    projectId: number,
  ): Promise<{ rate: RateLimitResult; revisions: ProjectRevisions | null }> {
    return { rate: await this.consume(bucket, limit, windowSeconds), revisions: this.revisionsOf(projectId) };
  }

  private revisionsOf(projectId: number): ProjectRevisions {
    let revisions = this.revisions.get(projectId);
    if (revisions === undefined) {
      revisions = { content: `${randomUUID()}:0`, lookups: randomUUID() };
      this.revisions.set(projectId, revisions);
      this.changes.set(projectId, new Map());
    }
    return revisions;
  }

  async bump(projectId: number, options: { lookups?: boolean; change?: ContentChange } = {}): Promise<Bumped> {
    const current = this.revisionsOf(projectId);
    const { epoch, seq } = parseRevision(current.content)!;
    const lookups = options.lookups ? randomUUID() : current.lookups;
    this.revisions.set(projectId, { content: `${epoch}:${seq + 1}`, lookups });
    const changes = this.changes.get(projectId)!;
    changes.set(seq + 1, options.change ?? { kind: "all" });
    changes.delete(seq + 1 - CHANGES_KEPT);
    return { lookups: options.lookups ? { previous: current.lookups, current: lookups } : null };
  }

  async changesBetween(projectId: number, from: string, to: string): Promise<ContentChange[] | null> {
    const [a, b] = [parseRevision(from), parseRevision(to)];
    const current = this.revisions.get(projectId);
    if (!a || !b || !current || a.epoch !== b.epoch || parseRevision(current.content)?.epoch !== b.epoch) return null;
    const changes = this.changes.get(projectId)!;
    const result: ContentChange[] = [];
    for (let seq = a.seq + 1; seq <= b.seq; seq++) {
      const change = changes.get(seq);
      if (change === undefined) return null;
      result.push(change);
    }
    return result;
  }

  async close(): Promise<void> {
    this.counters.clear();
    this.revisions.clear();
    this.changes.clear();
  }
}

/**
 * Exact within one process: the embedded default only (a Redis deployment never falls back to it).
 * Beside the records, an index per scope (idempotencyScopeOf) of the keys claimed in it, each with
 * the time its place lapses (its lock or record lifetime, plus SCOPE_GRACE_SECONDS after a claim),
 * pruned at each claim of the scope and dropped whole once every place lapsed: forgetScope deletes
 * exactly the scope's records, and complete writes only a key still in its scope's index.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records: ExpiringMap<IdempotencyRecord & { token?: string }>;
  /** Scope -> key -> when its place lapses (ms). */
  private readonly scopes: ExpiringMap<Map<string, number>>;

  constructor(private readonly now: () => number = Date.now) {
    this.records = new ExpiringMap(now);
    this.scopes = new ExpiringMap(now);
  }

  async claim(key: string, fingerprint: string, lockSeconds: number): Promise<ClaimResult> {
    const existing = this.records.get(key);
    if (existing) {
      const { token: _token, ...record } = existing;
      return { claimed: false, record };
    }
    const token = randomUUID();
    this.records.set(key, { state: "running", fingerprint, token }, lockSeconds * 1000);
    this.place(key, (lockSeconds + SCOPE_GRACE_SECONDS) * 1000, true);
    return { claimed: true, token };
  }

  async complete(key: string, token: string, fingerprint: string, response: StoredResponse, ttlSeconds: number): Promise<void> {
    // Not in its scope's index: the scope was forgotten (an erasure) since the claim.
    if (this.scopes.get(idempotencyScopeOf(key))?.has(key) !== true) return;
    const existing = this.records.get(key);
    if (existing && existing.token !== token) return;
    this.records.set(key, { state: "done", fingerprint, response }, ttlSeconds * 1000);
    this.place(key, ttlSeconds * 1000, false);
  }

  async release(key: string, token: string): Promise<void> {
    if (this.records.get(key)?.token !== token) return;
    this.records.delete(key);
    this.scopes.get(idempotencyScopeOf(key))?.delete(key);
  }

  async forgetScope(scope: string): Promise<number> {
    const keys = this.scopes.get(scope);
    this.scopes.delete(scope);
    let deleted = 0;
    for (const key of keys?.keys() ?? []) {
      if (this.records.get(key) !== undefined) deleted++;
      this.records.delete(key);
    }
    return deleted;
  }

  /** Records `key` in its scope's index until `keepMs` from now; `prune` drops lapsed places first. */
  private place(key: string, keepMs: number, prune: boolean): void {
    const scope = idempotencyScopeOf(key);
    const now = this.now();
    const keys = this.scopes.get(scope) ?? new Map<string, number>();
    if (prune) for (const [member, until] of keys) if (until <= now) keys.delete(member);
    keys.set(key, now + keepMs);
    let last = now;
    for (const until of keys.values()) last = Math.max(last, until);
    this.scopes.set(scope, keys, last - now);
  }

  async close(): Promise<void> {
    this.records.clear();
    this.scopes.clear();
  }
}
