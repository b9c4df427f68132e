/**
 * Totals of the features listings (feedback-board-api-v3.md, the list's `meta.total`), counted
 * once and reused across page builds, sorts and pages of one filter (docs/decisions.md, "Caching").
 * A total moves
 * only when a feature enters or leaves the filter: an owner edit, a review, a new or deleted
 * feature; never a vote (a vote moves no feature between boards, columns, statuses or tags).
 * So a total is kept with the content revision it was counted at and reused while every change
 * recorded since is a vote (read-dependencies.ts, dependencies `not-votes`), on every instance,
 * with no notice between them: the next read anywhere after a write's answer sees its total.
 */
import type { CountedTotal, TotalCount } from "../../lib/data/app-caches.ts";
import { isCurrentAt, type ReadDependencies, type Revisioned } from "../../lib/data/read-dependencies.ts";
import type { AppDeps } from "../../lib/http/context.ts";

const NOT_VOTES: ReadDependencies = { kind: "not-votes" };

/**
 * The total of the listing under `key` (project id, filter as JSON) as of content revision
 * `revision` (null when the shared store did not answer: a cached total is then trusted for its
 * cache time, PROJECT_CACHE_SECONDS): a cached total still current at `revision`, else that of a
 * count under way on this instance that is current at it, else the total of the page `count()`
 * builds (which counts in its own statement), started here and returned as `counted` for the
 * caller to serve. One count per filter at a time while only votes arrive: on the large bench
 * project a count scans 55,000 rows. Rejects with `count()`'s error.
 */
export async function listingTotal<Page extends { total: number }>(
  deps: Pick<AppDeps, "caches" | "contentRevisions">,
  key: [projectId: number, filter: string],
  revision: string | null,
  count: () => Promise<Page>,
): Promise<{ total: number; counted?: Page }> {
  const { listTotals, totalCounts, contentChanges } = deps.caches;
  // A total or a count made while the store did not answer is current for no known revision.
  const isCurrent = async (made: CountedTotal | TotalCount) => {
    if (revision === null) return true;
    if (made.revision === null) return false;
    return isCurrentAt(made as Revisioned, revision, key[0], contentChanges, deps.contentRevisions);
  };
  const cached = listTotals.get(key);
  if (cached && (await isCurrent(cached))) return { total: cached.total };
  const countKey = key.join("\n");
  const underWay = totalCounts.get(countKey);
  if (underWay && (await isCurrent(underWay))) return { total: await underWay.total };
  // A clear (an import, a key regeneration) while counting keeps the total from being stored.
  const clears = listTotals.clears;
  const page = count();
  const record: TotalCount = { revision, dependencies: NOT_VOTES, total: page.then((counted) => counted.total) };
  record.total.catch(() => {});
  totalCounts.set(countKey, record);
  try {
    const counted = await page;
    listTotals.setUnlessClearedSince(key, { total: counted.total, revision, dependencies: NOT_VOTES }, clears);
    return { total: counted.total, counted };
  } finally {
    if (totalCounts.get(countKey) === record) totalCounts.delete(countKey);
  }
}
