/**
 * In-process cache of what every keyed request looks up and what changes only when an owner
 * edits a project (key -> project with its settings, board structure, listing totals), kept
 * PROJECT_CACHE_SECONDS (default 5; 0 turns it off).
 *
 * Invalidation: admin code that changes keys or project content (key regeneration, snapshot
 * import) calls `notifyCacheInvalidation(db)`. That clears every cache in this process at once
 * and sends a Postgres NOTIFY on CACHE_CHANNEL, which every other instance receives through
 * `listenForCacheInvalidation` (postgres-js `sql.listen`, PGlite `pg.listen`) and clears its
 * caches too. The TTL bounds staleness when a notification is missed (a reconnect also clears).
 * Nothing negative is cached: a key unknown a moment ago works as soon as it is stored.
 */
import { type Kysely, sql } from "kysely";
import { LRUCache } from "lru-cache";

export const CACHE_CHANNEL = "fb_project_cache";
/** Entries kept per cache, least recently used dropped first (a bound on memory, not a tuning knob). */
const MAX_ENTRIES = 50_000;

/** LRUCache stores objects only: values are boxed. */
interface Entry {
  value: unknown;
}

/** A bound in bytes instead of entries, for caches of large values (response bodies). */
export interface ByteBound {
  maxBytes: number;
  /** Approximate bytes `value` stored under `key` occupies. */
  bytesOf: (value: unknown, key: string) => number;
}

/**
 * In-process cache with a TTL, least recently used entries dropped first, one load per key at a
 * time, and a clear() that also keeps loads under way from storing what they read. The project
 * cache (below) and the shared read cache (src/middleware/shared-read-cache.ts) are instances.
 */
export class LocalCache {
  private readonly entries: LRUCache<string, Entry>;
  private readonly loading = new Map<string, Promise<unknown>>();
  private generation = 0;

  /** `ttlMs` 0 turns the cache off; without `bound`, at most MAX_ENTRIES entries are kept. */
  constructor(
    private readonly ttlMs: number,
    bound?: ByteBound,
  ) {
    const limit = bound
      ? { maxSize: bound.maxBytes, sizeCalculation: (entry: Entry, key: string) => Math.max(1, bound.bytesOf(entry.value, key)) }
      : { max: MAX_ENTRIES };
    // Wall-clock time (Date.now) rather than lru-cache's default performance.now, so that tests
    // can move the clock.
    this.entries = new LRUCache<string, Entry>({ ...limit, ttl: Math.max(ttlMs, 1), perf: { now: () => Date.now() }, ttlResolution: 0 });
  }

  /**
   * The value under `key`, loaded with `load` when absent or expired. Concurrent misses share
   * one load. Results for which `keep` is false (default: undefined) are returned, not stored.
   */
  async remember<T>(key: string, load: () => Promise<T>, keep: (value: T) => boolean = (v) => v !== undefined): Promise<T> {
    if (this.ttlMs <= 0) return load();
    const hit = this.entries.get(key);
    if (hit) return hit.value as T;
    const pending = this.loading.get(key);
    if (pending) return pending as Promise<T>;
    const generation = this.generation;
    // After a clear() another load of the key may be under way: leave its record alone.
    const done = () => {
      if (this.loading.get(key) === promise) this.loading.delete(key);
    };
    const promise: Promise<T> = load().then(
      (value) => {
        done();
        // A load that straddles an invalidation may have read the old state: use it once, keep it not.
        if (keep(value) && generation === this.generation) this.entries.set(key, { value });
        return value;
      },
      (error: unknown) => {
        done();
        throw error;
      },
    );
    this.loading.set(key, promise);
    return promise;
  }

  /** The value under `key` if present and fresh. */
  get<T>(key: string): T | undefined {
    return this.entries.get(key)?.value as T | undefined;
  }

  /** Forgets the value under `key` (a load under way still stores what it read). */
  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Stores `value` under `key` for the TTL. */
  set(key: string, value: unknown): void {
    if (this.ttlMs <= 0) return;
    this.entries.set(key, { value });
  }

  /** Forgets everything (and makes loads already under way not store their result). */
  clear(): void {
    this.generation++;
    this.entries.clear();
    this.loading.clear();
  }
}

const caches = new WeakMap<object, LocalCache>();
const live = new Set<WeakRef<{ clear(): void }>>();

/**
 * Adds `cache` to what `invalidateLocalCaches` (and so a CACHE_CHANNEL notification) clears;
 * held weakly, so a dropped cache needs no unregistering.
 */
export function registerLocalCache(cache: { clear(): void }): void {
  live.add(new WeakRef(cache));
}

/** The cache of the database handle `db` (created on first use with the given TTL). */
export function projectCache(deps: { db: object; config: { PROJECT_CACHE_SECONDS: number } }): LocalCache {
  let cache = caches.get(deps.db);
  if (!cache) {
    cache = new LocalCache(deps.config.PROJECT_CACHE_SECONDS * 1000);
    caches.set(deps.db, cache);
    registerLocalCache(cache);
  }
  return cache;
}

/**
 * The lookups revision (store.types.ts RateLimitResult.lookupsRevision) this process last saw for
 * each project. Every keyed request reads the project's current one with its rate-limit counter;
 * when it differs from the one seen here, an owner changed keys, settings, boards or voters
 * somewhere since this process cached them, and the request must not trust its cached lookups.
 */
export class SeenLookupRevisions {
  private readonly seen = new Map<number, string>();

  /** Records `revision` for the project; true when it differs from the one seen before (or none was). */
  changed(projectId: number, revision: string): boolean {
    if (this.seen.get(projectId) === revision) return false;
    this.seen.set(projectId, revision);
    return true;
  }
}

const seenRevisions = new WeakMap<object, SeenLookupRevisions>();

/** The lookups revisions seen by the process that owns database handle `db`. */
export function seenLookupRevisions(deps: { db: object }): SeenLookupRevisions {
  let seen = seenRevisions.get(deps.db);
  if (!seen) {
    seen = new SeenLookupRevisions();
    seenRevisions.set(deps.db, seen);
  }
  return seen;
}

/** Clears every project cache of this process. */
export function invalidateLocalCaches(): void {
  for (const ref of live) {
    const cache = ref.deref();
    if (cache) cache.clear();
    else live.delete(ref);
  }
}

/**
 * To be called by admin code after it changed keys, settings or content of a project: clears
 * this process's caches now and notifies every other instance (delivered when the surrounding
 * transaction commits, if `db` is one; call it after commit to be safe).
 */
// biome-ignore lint/suspicious/noExplicitAny: called with the app's database and the migrations' Kysely<any> alike
export async function notifyCacheInvalidation(db: Kysely<any>): Promise<void> {
  invalidateLocalCaches();
  await sql`SELECT pg_notify(${CACHE_CHANNEL}, '')`.execute(db);
}

/** Subscribes `onNotify` to a channel; resolves to an unsubscribe function. */
export type Listen = (channel: string, onNotify: () => void) => Promise<() => Promise<void>>;

/**
 * Clears this process's caches whenever another process notifies CACHE_CHANNEL (and when the
 * subscription is (re)established, as notifications sent meanwhile are lost). Resolves to a
 * function that ends the subscription.
 */
export async function listenForCacheInvalidation(listen: Listen): Promise<() => Promise<void>> {
  return listen(CACHE_CHANNEL, invalidateLocalCaches);
}
