/**
 * The in-process caches of one app (docs/architecture.md, "Per-request services": typed namespaces
 * held in
 * AppDeps, no module state). What every keyed request looks up and what changes only when an
 * owner edits a project (key -> project with its settings, allowlists, anonymous voters, board
 * structure, list targets and totals, the next scheduled publication) lives in namespaces of one
 * store kept PROJECT_CACHE_SECONDS (default 5; 0 turns it off). Each namespace builds its keys
 * from typed parts in one place (`remember(parts, load)`), so no layer writes a key by hand.
 * The shared read cache of whole answers (src/middleware/shared-read-cache.ts) is its own,
 * byte-bounded store, keyed by the project's content revision; it also holds the FeatureObjects
 * kept for listing builds (src/routes/features/features.object-cache.ts).
 *
 * Invalidation:
 * - Per project, on every instance: the lookups revision read with each keyed request's rate
 *   counter (src/middleware/rate-limit.ts, `seenLookupRevisions`); owner writes replace it
 *   (ContentRevisions.bump with lookups).
 * - Everything, on every instance: admin code (key regeneration, import) and owner writes call
 *   `notifyCacheInvalidation`, which clears the caller's caches (if given) and sends a Postgres
 *   NOTIFY on CACHE_CHANNEL that every app receives through `listenForCacheInvalidation`. The
 *   owner's edit of one feature sends none: it changes no lookup but listing totals, which are
 *   kept with the content revision they were counted at (src/routes/features/features.totals.ts).
 * The TTL bounds staleness when a notification is missed (a reconnect also clears). Nothing
 * negative is cached: a key unknown a moment ago works as soon as it is stored.
 */
import { type Kysely, sql } from "kysely";
import { LRUCache } from "lru-cache";
import type { Config } from "../../config.ts";
import type { BooleanFieldOverlay } from "../http/boolean-field-overlay.ts";
import type { VoterContext } from "../http/context.ts";
import { ContentChangeLog, type ReadDependencies, type Revisioned } from "./read-dependencies.ts";
import type { FoundKey } from "./resolution.repository.ts";

export const CACHE_CHANNEL = "fb_project_cache";
/** Entries kept per cache, least recently used dropped first (a bound on memory, not a tuning knob). */
const MAX_ENTRIES = 50_000;
/** Up to this many entries, clear() deletes them one by one rather than resetting the whole store. */
const CLEAR_BY_DELETE_MAX = 2_000;

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
 * time, and a clear() that also keeps loads under way from storing what they read.
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
    return this.loadOnce(key, key, load, keep);
  }

  /**
   * Runs `load` once for concurrent callers with the same `flightKey` and stores its result
   * under `storeKey` when `keep` says so (default: not undefined) and no clear() ran meanwhile.
   * Two keys, so that callers who may not share a load (answers of different revisions) can
   * still fill the same entry.
   */
  async loadOnce<T>(
    flightKey: string,
    storeKey: string,
    load: () => Promise<T>,
    keep: (value: T) => boolean = (v) => v !== undefined,
  ): Promise<T> {
    if (this.ttlMs <= 0) return load();
    const pending = this.loading.get(flightKey);
    if (pending) return pending as Promise<T>;
    const generation = this.generation;
    // After a clear() another load of the key may be under way: leave its record alone.
    const done = () => {
      if (this.loading.get(flightKey) === promise) this.loading.delete(flightKey);
    };
    const promise: Promise<T> = load().then(
      (value) => {
        done();
        // A load that straddles an invalidation may have read the old state: use it once, keep it not.
        if (keep(value) && generation === this.generation) this.entries.set(storeKey, { value });
        return value;
      },
      (error: unknown) => {
        done();
        throw error;
      },
    );
    this.loading.set(flightKey, promise);
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

  /** How many times clear() ran: read before a value is computed, for setUnlessClearedSince. */
  get clears(): number {
    return this.generation;
  }

  /**
   * set(), unless clear() ran since `clears` was `since`: a value read while an invalidation
   * happened may show the old state (the rule loadOnce follows, for values loaded elsewhere).
   */
  setUnlessClearedSince(key: string, value: unknown, since: number): void {
    if (since === this.generation) this.set(key, value);
  }

  /** Forgets everything (and makes loads already under way not store their result). */
  clear(): void {
    this.generation++;
    // lru-cache's clear() fills its slot arrays over the whole capacity (MAX_ENTRIES), about
    // 0.5 ms paid by every owner write; the few entries held since the last clear go one by one.
    if (this.entries.size <= CLEAR_BY_DELETE_MAX) {
      // keys() skips expired entries: drop those first, so none can come back under a moved clock.
      this.entries.purgeStale();
      for (const key of [...this.entries.keys()]) this.entries.delete(key);
    } else this.entries.clear();
    this.loading.clear();
  }
}

/**
 * The lookups revision (store.types.ts RateLimitResult.lookupsRevision) this process last saw for
 * each project. Every keyed request reads the project's current one with its rate-limit counter;
 * when it differs from the one seen here, an owner changed keys, settings, boards or voters
 * somewhere since this process cached them, and the request must not trust its cached lookups.
 */
export class SeenLookupRevisions {
  private readonly seen = new Map<number, string>();

  /** Whether `revision` is the one seen last for the project (records nothing: see changed()). */
  isSeen(projectId: number, revision: string): boolean {
    return this.seen.get(projectId) === revision;
  }

  /** Records `revision` for the project; true when it differs from the one seen before (or none was). */
  changed(projectId: number, revision: string): boolean {
    if (this.seen.get(projectId) === revision) return false;
    this.seen.set(projectId, revision);
    return true;
  }

  /**
   * After this app's own owner write replaced the project's lookups revision `previous` by
   * `current` (ContentRevisions.bump), having cleared its caches once the write committed:
   * records `current` as seen when `previous` is the one seen here, so this app's next request
   * does not clear and reload once more what the write made it reload already. When another
   * change came in between (`previous` is not the one seen), nothing is recorded and the next
   * request reloads as usual.
   */
  advanced(projectId: number, previous: string | null, current: string): void {
    if (previous !== null && this.seen.get(projectId) === previous) this.seen.set(projectId, current);
  }
}

/** One namespace of a LocalCache: values of one kind under keys built from typed parts. */
export class CacheNamespace<Parts extends readonly (string | number)[], Value> {
  constructor(
    private readonly store: LocalCache,
    private readonly name: string,
  ) {}

  /** The store key of `parts`: parts never hold a newline (slugs, digests, ids, JSON text). */
  private keyOf(parts: Parts): string {
    return parts.length === 0 ? this.name : `${this.name}\n${parts.join("\n")}`;
  }

  /** LocalCache.remember under the key of `parts` (absent values are not stored). */
  remember(parts: Parts, load: () => Promise<Value>): Promise<Value> {
    return this.store.remember(this.keyOf(parts), load);
  }

  get(parts: Parts): Value | undefined {
    return this.store.get<Value>(this.keyOf(parts));
  }

  set(parts: Parts, value: Value): void {
    this.store.set(this.keyOf(parts), value);
  }

  /** How many times the store was cleared (see LocalCache.setUnlessClearedSince). */
  get clears(): number {
    return this.store.clears;
  }

  setUnlessClearedSince(parts: Parts, value: Value, since: number): void {
    this.store.setUnlessClearedSince(this.keyOf(parts), value, since);
  }

  delete(parts: Parts): void {
    this.store.delete(this.keyOf(parts));
  }
}

export interface BoardColumnRow {
  board_id: number;
  board_kind: "roadmap" | "custom";
  board_name: string;
  board_slug: string;
  board_position: number;
  /** null for a board without columns (left join). */
  column_id: number | null;
  column_name: string | null;
  column_color: string | null;
  column_position: number | null;
  column_is_votable: boolean | null;
  column_status: string | null;
}

export interface ListTarget {
  boardId: number;
  /** The requested column when it exists on that board (null when none was asked or found). */
  column: { id: number; status: string | null } | null;
}

/** What the next scheduled publication lookup found (src/lib/data/next-publication.ts). */
export interface NextPublication {
  /** The time the query looked after (ms since the epoch). */
  after: number;
  /** The earliest published_at after it (ms), or null when there is none. */
  next: number | null;
  /** The latest published_at at or before it (ms), or null when there is none. */
  previous: number | null;
}

/** A cached whole answer of the shared read cache (src/middleware/shared-read-cache.ts). */
export interface CachedRead {
  body: string;
  etag: string;
  contentType: string;
  /** Prepared on the first personalized read of the entry; null when the body does not allow it. */
  overlay?: BooleanFieldOverlay | null;
  /**
   * When a scheduled release of the project becomes public after the answer was built (ms since
   * the epoch; null: none is scheduled): the entry is not served from then on (Rule 4).
   */
  expiresAt?: number | null;
  /**
   * The content revision the answer is known to be current at: the one its build started at,
   * moved forward each time the changes since then are found not to touch it.
   */
  revision: string;
  /** What the answer shows (set by the route; `all` when it did not say). */
  dependencies: ReadDependencies;
  /**
   * Set when the answer was built for a keyed read with no access mark (not an owner, identity
   * or feed route), with the project slug its path names (null on /board, which names none):
   * only such answers are served before the app (src/middleware/early-hit.ts), which has no
   * router to learn either from. The path alone decides both, so every request for the entry
   * shares them.
   */
  plainRead?: { slug: string | null };
}

/**
 * One feature's FeatureObject as an anonymous reader gets it, as JSON text, kept for the next
 * build of a listing that shows it (src/routes/features/features.object-cache.ts); in the
 * answers' store, like the cached answers, and retired like one that shows only that feature.
 */
export interface CachedFeatureObject extends Revisioned {
  json: string;
  /** As CachedRead.expiresAt (a scheduled release changes the object's `release`). */
  expiresAt: number | null;
}

/** The ids a listing's last build listed (features.object-cache.ts), in the answers' store. */
export interface ListedIds {
  ids: readonly number[];
}

/**
 * A features listing's total as counted at content revision `revision` (null: counted while the
 * shared store did not answer). It holds while only votes change the project (dependencies
 * `not-votes`: a vote moves no feature in or out of a listing), which isCurrentAt checks against
 * the change records, like a cached answer's.
 */
export interface CountedTotal {
  total: number;
  revision: string | null;
  readonly dependencies: ReadDependencies;
}

/** A count of a listing total under way, started at content revision `revision` (as CountedTotal). */
export interface TotalCount {
  revision: string | null;
  readonly dependencies: ReadDependencies;
  total: Promise<number>;
}

/** Bytes of what an entry of the answers' store holds beyond its key (UTF-16: two a character). */
function storedBytes(value: CachedRead | CachedFeatureObject | ListedIds): number {
  if ("body" in value) return 2 * (value.body.length + value.etag.length);
  if ("json" in value) return 2 * value.json.length;
  return 8 * value.ids.length;
}

/** Every in-process cache of one app (AppDeps.caches). */
export interface AppCaches {
  /** SHA-256 digest of an API key -> the key and its project (frozen); unknown keys are not kept. */
  readonly keys: CacheNamespace<[keyHash: string], FoundKey | undefined>;
  /** Slug -> the allowlist of that public project (CORS preflights). */
  readonly allowedOrigins: CacheNamespace<[slug: string], readonly string[] | undefined>;
  /** Every origin on some public project's allowlist (keyless preflights). */
  readonly allAllowedOrigins: CacheNamespace<[], ReadonlySet<string>>;
  /** (project, anonymous token digest) -> voter; unknown tokens are not kept. */
  readonly anonymousVoters: CacheNamespace<[projectId: number, tokenHash: string], VoterContext | undefined>;
  /** Project -> its boards with their columns (BoardDocument). */
  readonly boardColumns: CacheNamespace<[projectId: number], BoardColumnRow[]>;
  /** Project -> its tags (BoardDocument). */
  readonly tags: CacheNamespace<[projectId: number], { id: number; name: string }[]>;
  /** (project, board slug or "", column id or "") -> the features list's board and column. */
  readonly listTargets: CacheNamespace<[projectId: number, board: string, column: number | ""], ListTarget | undefined>;
  /** (project, filter as JSON) -> the total of a features listing, with the revision it was counted at. */
  readonly listTotals: CacheNamespace<[projectId: number, filter: string], CountedTotal>;
  /** Counts of listing totals under way, by listTotals key parts joined with a newline. */
  readonly totalCounts: Map<string, TotalCount>;
  /** Project -> its next scheduled publication. */
  readonly nextPublication: CacheNamespace<[projectId: number], NextPublication>;
  /** Whole answers keyed by content revision (null when READ_CACHE_SECONDS is 0). */
  readonly responses: LocalCache | null;
  /** The lookups revision this app last saw per project (see SeenLookupRevisions). */
  readonly seenLookupRevisions: SeenLookupRevisions;
  /**
   * Counts of the shared read cache since start: answers served from an entry (`hits`), of
   * which before the app (`early`, src/middleware/early-hit.ts), answers built by running the
   * route to fill one (`builds`), and entries filled with an answer another instance built
   * (`shared`); FeatureObjects listing builds took from the kept ones (`objectsKept`) and had
   * Postgres write (`objectsWritten`, src/routes/features/features.object-cache.ts). Read by
   * the bench's mixed load.
   */
  readonly readStats: { hits: number; early: number; builds: number; shared: number; objectsKept: number; objectsWritten: number };
  /** The projects' change records read so far (see ContentChangeLog). */
  readonly contentChanges: ContentChangeLog;
  /** Forgets every looked-up value (all namespaces), keeping cached answers. */
  clearLookups(): void;
  /** Forgets everything, answers included. */
  clearAll(): void;
}

/**
 * The caches of a new app: namespaces over one store of PROJECT_CACHE_SECONDS, and the answers'
 * store of READ_CACHE_SECONDS bounded by READ_CACHE_MB (UTF-16 in memory: two bytes a character),
 * and an empty copy of the projects' change records.
 */
export function createAppCaches(config: Pick<Config, "PROJECT_CACHE_SECONDS" | "READ_CACHE_SECONDS" | "READ_CACHE_MB">): AppCaches {
  const lookups = new LocalCache(config.PROJECT_CACHE_SECONDS * 1000);
  const totalCounts = new Map<string, TotalCount>();
  const responses =
    config.READ_CACHE_SECONDS > 0
      ? new LocalCache(config.READ_CACHE_SECONDS * 1000, {
          maxBytes: Math.floor(config.READ_CACHE_MB * 1024 * 1024),
          bytesOf: (value, key) => 2 * key.length + 200 + storedBytes(value as CachedRead | CachedFeatureObject | ListedIds),
        })
      : null;
  return {
    keys: new CacheNamespace(lookups, "key"),
    allowedOrigins: new CacheNamespace(lookups, "origins-of"),
    allAllowedOrigins: new CacheNamespace(lookups, "origins-of-all"),
    anonymousVoters: new CacheNamespace(lookups, "anon-voter"),
    boardColumns: new CacheNamespace(lookups, "boards"),
    tags: new CacheNamespace(lookups, "tags"),
    listTargets: new CacheNamespace(lookups, "target"),
    listTotals: new CacheNamespace(lookups, "total"),
    totalCounts,
    nextPublication: new CacheNamespace(lookups, "next-publication"),
    responses,
    seenLookupRevisions: new SeenLookupRevisions(),
    readStats: { hits: 0, early: 0, builds: 0, shared: 0, objectsKept: 0, objectsWritten: 0 },
    contentChanges: new ContentChangeLog(),
    clearLookups: () => {
      lookups.clear();
      totalCounts.clear();
    },
    clearAll: () => {
      lookups.clear();
      totalCounts.clear();
      responses?.clear();
    },
  };
}

/**
 * To be called after a change to keys, settings or content of a project outside the keyed
 * request chain's revisions (admin import, key regeneration) or beyond it (owner writes): clears
 * `caches` (the caller's own, when it has an app) now and notifies every app listening on
 * CACHE_CHANNEL (delivered when the surrounding transaction commits, if `db` is one; call it
 * after commit to be safe).
 */
// biome-ignore lint/suspicious/noExplicitAny: called with the app's database and the migrations' Kysely<any> alike
export async function notifyCacheInvalidation(db: Kysely<any>, caches?: AppCaches): Promise<void> {
  caches?.clearAll();
  await sql`SELECT pg_notify(${CACHE_CHANNEL}, '')`.execute(db);
}

/** Subscribes `onNotify` (given the payload; none on a (re)subscription) to a channel; resolves to an unsubscribe function. */
export type Listen = (channel: string, onNotify: (payload?: string) => void) => Promise<() => Promise<void>>;

/**
 * Clears `caches` whenever a process notifies CACHE_CHANNEL (and when the subscription is
 * (re)established, as notifications sent meanwhile are lost). Resolves to a function that ends
 * the subscription.
 */
export async function listenForCacheInvalidation(listen: Listen, caches: AppCaches): Promise<() => Promise<void>> {
  return listen(CACHE_CHANNEL, () => caches.clearAll());
}
