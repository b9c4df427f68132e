/**
 * FeatureObjects kept as JSON text between builds of the features listing (docs/decisions.md,
 * "Caching": "FeatureObjects kept between listing builds").
 *
 * Writing a page's twenty FeatureObjects is half of what the listing statement costs Postgres,
 * yet a page is mostly rebuilt after a vote, which changes one of them. So the objects an
 * anonymous build wrote are kept, each with the content revision it was read at and the
 * dependencies of one feature (read-dependencies.ts `feature`: a vote on it, or any other change
 * of the project, retires it), and until the next scheduled publication (a release reaching its
 * time changes the object's `release` with no write; next-publication.ts). The next build of the
 * same listing (its filter, sort and page, whatever else the query string holds) passes the ones
 * still current at its revision to the statement, which leaves them out
 * (features.repository.ts listFeaturePage); the page's bytes are the same either way.
 *
 * The objects live in the shared read cache's store (AppCaches.responses) under keys no request
 * target can take, so every clear of the cached answers (an outage of the shared store, an
 * import, a write that could not record its revision) clears them too, and they count against
 * READ_CACHE_MB. Personal builds (has_voted for a voter) keep and use nothing.
 */
import type { CachedFeatureObject, ListedIds } from "../../lib/data/app-caches.ts";
import { nextPublicationAfter } from "../../lib/data/next-publication.ts";
import { isCurrentAt } from "../../lib/data/read-dependencies.ts";
import type { AppDeps } from "../../lib/http/context.ts";
import type { FeaturePageJson } from "./features.repository.ts";

/** What one listing build may take from the kept objects, and how it keeps its own. */
export interface ListingObjects {
  /** FeatureObject texts current at the build's revision, by feature id (empty when none may be used). */
  readonly kept: ReadonlyMap<number, string>;
  /** Every id the listing's last build listed is in `kept` (the page most likely lists only those). */
  readonly keptAll: boolean;
  /** Keeps the objects the build's page had Postgres write, and which ids it listed. */
  keep(page: FeaturePageJson): Promise<void>;
}

const NOTHING: ListingObjects = { kept: new Map(), keptAll: false, keep: async () => {} };

/** The key of a kept object: "#" never starts a request target (those start with "/"). */
function objectKey(projectId: number, shape: string, featureId: number): string {
  return `${projectId}\n#feature-object\n${shape}\n${featureId}`;
}

function idsKey(projectId: number, listing: string): string {
  return `${projectId}\n#listing-ids\n${listing}`;
}

/**
 * The kept objects for a build of the listing `listing` (its filter, sort and page as a string)
 * of project `projectId` at content revision `revision`, reading as voter `voterId`, objects
 * written under settings shape `shape` (which counters show; featureObjectShape). The ids
 * looked up are those the listing's last build on this instance listed. Nothing is used or
 * kept for a voter, without a revision (the shared store did not answer), or without the
 * shared read cache. `builtAt` is the moment the build reads releases at: its objects are kept
 * until the project's next publication after it.
 */
export async function listingObjects(
  deps: Pick<AppDeps, "db" | "caches" | "contentRevisions" | "now">,
  options: { projectId: number; shape: string; listing: string; revision: string | null; voterId: number | null; builtAt: Date },
): Promise<ListingObjects> {
  const store = deps.caches.responses;
  const { projectId, shape, listing, revision, builtAt } = options;
  if (store === null || revision === null || options.voterId !== null) return NOTHING;
  const clears = store.clears;
  const kept = new Map<number, string>();
  const now = deps.now().getTime();
  const listed = store.get<ListedIds>(idsKey(projectId, listing))?.ids ?? [];
  for (const id of listed) {
    const entry = store.get<CachedFeatureObject>(objectKey(projectId, shape, id));
    if (entry === undefined || (entry.expiresAt !== null && now >= entry.expiresAt)) continue;
    if (
      entry.revision !== revision &&
      !(await isCurrentAt(entry, revision, projectId, deps.caches.contentChanges, deps.contentRevisions))
    ) {
      continue;
    }
    kept.set(id, entry.json);
  }
  return {
    kept,
    keptAll: listed.length > 0 && kept.size === listed.length,
    keep: async (page) => {
      const expiresAt = await nextPublicationAfter(deps, projectId, builtAt);
      // A clear while this build read (an import, say) may mean it read the old state: keep nothing.
      for (const [featureId, json] of page.written) {
        const entry: CachedFeatureObject = { json, revision, expiresAt, dependencies: { kind: "feature", featureId } };
        store.setUnlessClearedSince(objectKey(projectId, shape, featureId), entry, clears);
      }
      store.setUnlessClearedSince(idsKey(projectId, listing), { ids: page.ids }, clears);
      deps.caches.readStats.objectsKept += page.ids.length - page.written.size;
      deps.caches.readStats.objectsWritten += page.written.size;
    },
  };
}
