/**
 * Shared read cache: whole 200 responses of anonymous reads, kept in process and keyed by the
 * project's content revision, so a page many visitors ask for is built once per change instead
 * of once per request (docs/decisions.md, "Caching": the contract's reads stay exact).
 *
 * Freshness: every successful write to a project gives it a new content revision in the shared
 * store (Redis, or the in-process store when there is none) before its response is sent
 * (`contentRevisionMiddleware`), and every keyed request reads the revision in the same round
 * trip as its rate-limit counter (src/middleware/rate-limit.ts). A write's effect is therefore
 * visible on every instance to any read that starts after the write answered. Admin changes
 * (import, key regeneration) clear the cache through the cache notification (app-caches.ts). The one
 * change no write announces, a scheduled release reaching its publish time, ends every entry of
 * the project built before that time exactly then (src/lib/data/next-publication.ts). Entries
 * also expire after READ_CACHE_SECONDS. Without a revision (the shared store did not answer) reads
 * bypass the cache, and the cache is emptied so nothing from before the outage is served after.
 *
 * Reads with a voter identity are never stored: has_voted, is_own and a voter's own unapproved
 * suggestions make them personal. Routes whose answer is the same for every reader (the board
 * document, the changelog) say so and serve everyone from one entry. A route whose personal
 * answer is the anonymous one with a boolean field set per voter (the features list and detail:
 * has_voted) passes `personalize`, and such reads start from the cached anonymous body (spliced,
 * not re-serialized: src/lib/http/boolean-field-overlay.ts).
 */
import type { MiddlewareHandler } from "hono";
import { type CachedRead, notifyCacheInvalidation } from "../lib/data/app-caches.ts";
import { nextPublicationAfter } from "../lib/data/next-publication.ts";
import { isCurrentAt, type ReadDependencies } from "../lib/data/read-dependencies.ts";
import { BooleanFieldOverlay, itemsOf } from "../lib/http/boolean-field-overlay.ts";
import type { AppDeps, AppEnv, VoterContext } from "../lib/http/context.ts";
import { cachedStringBody, sendDirect } from "../lib/runtime/runtime-adapter.ts";
import { etagMatches, etagOf, READ_CACHE_CONTROL } from "./read-cache.ts";

/**
 * How a reader's answer differs from the anonymous one: every item of the answer (`data`, or
 * each element of `data`; items have a numeric `id`) carries `field` as false for the anonymous
 * reader, and `trueFor` names the items on which it is true for `voter`. Must only add what the
 * identity adds to an answer the anonymous reader gets too (never what that reader is refused).
 */
export interface Personalize {
  field: string;
  trueFor(itemIds: readonly number[], voter: VoterContext, deps: AppDeps): Promise<ReadonlySet<number>>;
}

export interface SharedReadCacheOptions {
  /**
   * The route's answer does not depend on who reads it (board document, changelog): readers
   * with an identity share the anonymous entry.
   */
  sameForEveryReader?: boolean;
  /** Derives a reader's answer from the cached anonymous one (see Personalize). */
  personalize?: Personalize;
  /**
   * The route answers every reader with personalize(anonymous answer), errors included: on a
   * miss, a reader with an identity builds (and stores) the anonymous answer first. Without
   * it, such a reader is only served from an anonymous answer already cached (a feature's
   * detail: its author may see it while anonymous readers get 404).
   */
  personalizeAlways?: boolean;
}

/**
 * Route middleware for GET reads: answers anonymous readers from the cache when this revision
 * of the project already produced the same path and query, else lets the route run (validation
 * included) and keeps its 200 response. Placed before the validators, so a hit skips them: the
 * stored response came from the identical, already validated request. With `personalize`, a
 * reader with an identity gets the cached anonymous answer passed through it.
 */
export function sharedReadCache(options: SharedReadCacheOptions = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const cache = c.get("deps").caches.responses;
    const revision = c.get("contentRevision");
    const voter = options.sameForEveryReader ? null : c.get("voter");
    if (cache === null || c.req.method !== "GET") return next();
    if (revision === null) {
      cache.clear();
      return next();
    }
    if (voter !== null && options.personalize === undefined) return next();
    const projectId = c.get("project").id;
    const key = entryKey(projectId, requestTarget(c.req.url, c.req.path));
    const deps = c.get("deps");
    let entry = cache.get<CachedRead>(key);
    // Only answers this instance kept before are looked up in and shared with the cluster, so
    // never-repeated queries (a flood of unique ones) put nothing in Redis.
    const seenBefore = entry !== undefined;
    if (entry?.expiresAt != null && deps.now().getTime() >= entry.expiresAt) {
      cache.delete(key);
      entry = undefined;
    }
    if (entry && !(await currentAt(entry, revision, projectId, deps))) entry = undefined;
    let ranRoute = false;
    if (!entry) {
      if (voter !== null && !options.personalizeAlways) return next();
      // Built as the anonymous reader would get it, whoever asks; concurrent misses at the same
      // revision wait for one build (a build that keeps nothing leaves each to run the route
      // itself). A build started at an older revision may miss a write this request must see.
      const reader = c.get("voter");
      c.set("voter", null);
      try {
        entry = await cache.loadOnce(`${key}\n${revision}`, key, async () => {
          const fromCluster = seenBefore ? await clusterAnswer(key, revision, projectId, deps) : undefined;
          if (fromCluster) return fromCluster;
          ranRoute = true;
          deps.caches.readStats.builds++;
          // Taken before the route reads the clock, so the entry never outlives what it showed.
          const builtAt = deps.now();
          await next();
          const shared = await shareable(c.res, revision, c.get("readDependencies") ?? { kind: "all" });
          if (shared) {
            // Only the keyed chain's plain reads may be answered before the app (early-hit.ts).
            if (c.get("access") === undefined) shared.plainRead = { slug: c.req.param("slug") ?? null };
            shared.expiresAt = await nextPublicationAfter(deps, projectId, builtAt);
            if (seenBefore) await shareWithCluster(key, shared, deps);
          }
          return shared;
        });
        if (!entry && !ranRoute) {
          ranRoute = true;
          await next();
        }
      } finally {
        c.set("voter", reader);
      }
      // Nothing to share (an error): c.res is the route's own answer.
      if (!entry) return;
    }
    if (!ranRoute) deps.caches.readStats.hits++;
    if (voter === null) {
      if (ranRoute) return;
      return c.body(entry.body, 200, { "Content-Type": entry.contentType, ETag: entry.etag });
    }
    const personal = await personalized(entry, options.personalize!, voter, c.get("deps"));
    if (!ranRoute) return c.body(personal.body, 200, { "Content-Type": entry.contentType, ETag: personal.etag });
    // The anonymous build already answered: replace its body (hono carries the first answer's
    // headers over, so its ETag is replaced too).
    c.res = c.body(personal.body, 200, { "Content-Type": entry.contentType });
    c.res.headers.set("ETag", personal.etag);
  };
}

/** The part of a request's URL a cached answer is kept under: the path and the query string as sent. */
function requestTarget(url: string, path: string): string {
  const queryAt = url.indexOf("?");
  return queryAt < 0 ? path : `${path}${url.slice(queryAt)}`;
}

/** The cache key of a read: the project and the request target (path and query as sent). */
function entryKey(projectId: number, target: string): string {
  return `${projectId}\n${target}`;
}

/**
 * The cached answer to an anonymous GET of `target` (path and query string as sent) of project
 * `projectId` at content revision `revision`, counted as a hit; undefined for a miss (none, past
 * its expiry, or not current at the revision). Both hit paths (cachedReadHitMiddleware in the
 * app, and src/middleware/early-hit.ts before it) decide by it.
 */
export async function currentHit(deps: AppDeps, projectId: number, target: string, revision: string): Promise<CachedRead | undefined> {
  const entry = deps.caches.responses?.get<CachedRead>(entryKey(projectId, target));
  if (entry === undefined) return undefined;
  if (entry.expiresAt != null && deps.now().getTime() >= entry.expiresAt) return undefined;
  if (!(await currentAt(entry, revision, projectId, deps))) return undefined;
  deps.caches.readStats.hits++;
  return entry;
}

/**
 * The cached answer under `target` of project `projectId` at any revision, if it may be served
 * before the app (early-hit.ts): built for a plain keyed read, not past its expiry. Whether it
 * is current is only known after the request's revision is read (currentHit).
 */
export function earlyHitCandidate(deps: AppDeps, projectId: number, target: string): CachedRead | undefined {
  const entry = deps.caches.responses?.get<CachedRead>(entryKey(projectId, target));
  if (entry?.plainRead == null) return undefined;
  if (entry.expiresAt != null && deps.now().getTime() >= entry.expiresAt) return undefined;
  return entry;
}

/** A hit's answer: status, its own headers as name/value pairs (Content-Length aside), body. */
export interface HitAnswer {
  status: 200 | 304;
  headers: string[];
  body: string | null;
}

/**
 * The answer to a hit on `entry`, as the route's cache step and the read-cache middleware give
 * it: 304 with the ETag and Cache-Control when If-None-Match (`ifNoneMatch`, null when absent)
 * names the entry's ETag or is `*`, else 200 with the body, its type, ETag and Cache-Control.
 */
export function hitAnswer(entry: CachedRead, ifNoneMatch: string | null): HitAnswer {
  if (ifNoneMatch === "*" || etagMatches(entry.etag, ifNoneMatch)) {
    return { status: 304, headers: ["ETag", entry.etag, "Cache-Control", READ_CACHE_CONTROL], body: null };
  }
  return {
    status: 200,
    headers: ["Content-Type", entry.contentType, "ETag", entry.etag, "Cache-Control", READ_CACHE_CONTROL],
    body: entry.body,
  };
}

/**
 * The hit path (docs/architecture.md, "The request path"): placed right after the key and rate
 * checks, it answers an anonymous GET whose answer the cache holds at the current content
 * revision, so a hit skips the voter, write and body steps, the routing and the validators it
 * does not need. Only entries sharedReadCache stored exist, and each came from the identical,
 * validated request, so the answer is the one the route's own cache step would give: same body,
 * ETag, type, and (as the read-cache middleware adds them) Cache-Control and the 304 on a
 * matching If-None-Match. Requests carrying an identity header go the whole way (the voter step
 * checks the token and may personalize); so do misses, stale or expired entries, owner and
 * identity routes. Under Node the answer is written in one go onto the ServerResponse, whose
 * request-wide headers (static, X-Request-Id, rate, CORS) Node merges in. Most hits over HTTP
 * are answered before the app instead (src/middleware/early-hit.ts), by the same rules; this
 * step answers the rest (a key not in the process's cache yet, a handed-over count, ...).
 */
export function cachedReadHitMiddleware(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.req.method !== "GET") return next();
    const access = c.get("access");
    if (access === "owner" || access === "identity") return next();
    if (c.req.header("X-VF-Token") !== undefined || c.req.header("X-VF-Anon") !== undefined) return next();
    const revision = c.get("contentRevision");
    if (revision === null) return next();
    const entry = await currentHit(c.get("deps"), c.get("project").id, requestTarget(c.req.url, c.req.path), revision);
    if (entry === undefined) return next();
    c.set("voter", null);
    const answer = hitAnswer(entry, c.req.header("If-None-Match") ?? null);
    const sent = sendDirect(c, answer.status, answer.headers, answer.body);
    if (sent !== undefined) {
      c.set("sentStatus", answer.status);
      return sent;
    }
    // In-process: through hono, the read-cache middleware adds Cache-Control and answers 304.
    return c.body(entry.body, 200, { "Content-Type": entry.contentType, ETag: entry.etag });
  };
}

/**
 * The body of `entry` for `voter` (spliced through the entry's overlay, else re-serialized) and
 * its ETag. The body is a function of the anonymous body and the ids turned true, so the tag is
 * derived from those two instead of hashing the whole body again.
 */
async function personalized(
  entry: CachedRead,
  personalize: Personalize,
  voter: VoterContext,
  deps: AppDeps,
): Promise<{ body: string; etag: string }> {
  if (entry.overlay === undefined) entry.overlay = BooleanFieldOverlay.of(entry.body, personalize.field) ?? null;
  let body: string;
  let trueIds: ReadonlySet<number>;
  if (entry.overlay) {
    trueIds = await personalize.trueFor(entry.overlay.ids, voter, deps);
    body = entry.overlay.render(trueIds);
  } else {
    const envelope = JSON.parse(entry.body) as { data?: unknown };
    const items = itemsOf(envelope) as Record<string, unknown>[];
    trueIds = await personalize.trueFor(
      items.map((item) => item.id as number),
      voter,
      deps,
    );
    for (const item of items) item[personalize.field] = trueIds.has(item.id as number);
    body = JSON.stringify(envelope);
  }
  return { body, etag: etagOf(`${entry.etag}|${personalize.field}|${[...trueIds].sort((a, b) => a - b).join(",")}`) };
}

/** Whether `entry` still shows the project as of content revision `revision` (isCurrentAt). */
function currentAt(entry: CachedRead, revision: string, projectId: number, deps: AppDeps): Promise<boolean> {
  return isCurrentAt(entry, revision, projectId, deps.caches.contentChanges, deps.contentRevisions);
}

/** How long a claim on a build lasts, and how long another instance waits for its answer (ms). */
const BUILD_LEASE_MS = 250;
const BUILD_WAIT_MS = 150;

/** The JSON an answer is shared as (no overlay: each instance prepares its own). */
function sharedForm(entry: CachedRead): string {
  const { overlay: _overlay, ...rest } = entry;
  return JSON.stringify(rest);
}

/**
 * On a local miss, the answer another instance built and shared (deps.sharedAnswers), when it
 * shows revision `revision` (currentAt) and is not past its expiry; else undefined, and the
 * caller builds it. One instance claims each build per revision: the others wait for its answer
 * up to BUILD_WAIT_MS (then build themselves), so a change costs one build in the cluster.
 * Without shared answers, or when the store does not answer, undefined at once.
 */
async function clusterAnswer(key: string, revision: string, projectId: number, deps: AppDeps): Promise<CachedRead | undefined> {
  const answers = deps.sharedAnswers;
  if (!answers) return undefined;
  const deadline = Date.now() + BUILD_WAIT_MS;
  try {
    for (;;) {
      const { value, claimed } = await answers.getOrClaim(key, `${key}\n${revision}`, BUILD_LEASE_MS);
      if (value !== null) {
        const entry = JSON.parse(value) as CachedRead;
        const live = entry.expiresAt == null || deps.now().getTime() < entry.expiresAt;
        if (live && (await currentAt(entry, revision, projectId, deps))) {
          deps.caches.readStats.shared++;
          return entry;
        }
      }
      if (claimed || Date.now() >= deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } catch {
    // The shared store did not answer: build here.
    return undefined;
  }
}

/** Stores a built answer for the other instances (best effort: a failure only costs them a build). */
async function shareWithCluster(key: string, entry: CachedRead, deps: AppDeps): Promise<void> {
  try {
    await deps.sharedAnswers?.put(key, sharedForm(entry), deps.config.READ_CACHE_SECONDS);
  } catch {
    // Each instance then builds its own.
  }
}

/**
 * What a route's answer leaves in the cache: a 200 answer's body, ETag (also set on the answer,
 * so the read-cache middleware does not hash it again) and type, the revision its build started
 * at and what it shows; undefined for anything else.
 */
async function shareable(response: Response, revision: string, dependencies: ReadDependencies): Promise<CachedRead | undefined> {
  if (response.status !== 200) return undefined;
  // Outside @hono/node-server (in-process requests) the body is a stream: read a copy.
  const body = cachedStringBody(response) ?? (await response.clone().text());
  const entry = {
    body,
    etag: etagOf(body),
    contentType: response.headers.get("Content-Type") ?? "application/json",
    revision,
    dependencies,
  };
  response.headers.set("ETag", entry.etag);
  return entry;
}

/**
 * After a successful write (2xx to any method but GET and HEAD) gives the project a new content
 * revision, before the response leaves, unless the handler set contentUnchanged. When the
 * shared store does not answer, this process's cache is emptied (other instances bypass theirs
 * for as long as they cannot read a revision); after an owner write that set lookupsUnchanged,
 * every instance's caches are (notifyCacheInvalidation).
 */
export function contentRevisionMiddleware(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    if (c.req.method === "GET" || c.req.method === "HEAD") return;
    if (c.res.status < 200 || c.res.status >= 300 || c.get("contentUnchanged") === true) return;
    // An owner write may change what instances cache beyond content (keys, settings, voters).
    const lookupsUnchanged = c.get("lookupsUnchanged") === true;
    const lookups = c.get("access") === "owner" && !lookupsUnchanged;
    const deps = c.get("deps");
    const change = c.get("contentChange") ?? { kind: "all" };
    const projectId = c.get("project").id;
    const bumped = await deps.contentRevisions.bump(projectId, { lookups, change });
    // A write that sends no notice of its own (ownerChangeMiddleware) then sends one, which
    // clears every instance's caches, as when any other owner write meets a silent store.
    if (!bumped && lookupsUnchanged) await notifyCacheInvalidation(deps.db, deps.caches);
    else if (!bumped) deps.caches.responses?.clear();
    // ownerChangeMiddleware (inside this one) has cleared this app's lookups after the commit.
    else if (bumped.lookups) deps.caches.seenLookupRevisions.advanced(projectId, bumped.lookups.previous, bumped.lookups.current);
  };
}
