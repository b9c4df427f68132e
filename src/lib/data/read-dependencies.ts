/**
 * Which cached answers a write can change (docs/decisions.md, "Caching"). Every write gives its
 * project a new
 * content revision (src/middleware/shared-read-cache.ts), recorded in the shared store together
 * with what the write changed (a ContentChange). A cached answer records what it shows (its
 * ReadDependencies); when the project's revision has moved since the answer was built, the
 * changes in between are fetched once per process (ContentChangeLog) and the answer is served
 * again only if none of them can change it. Anything not described narrowly is `all`: a change
 * that retires every answer of the project, or an answer that every change retires.
 */
import type { ContentChange, ContentRevisions, RevisionPosition } from "../../store/store.types.ts";
import { parseRevision } from "../../store/store.types.ts";

export type { ContentChange };
export { parseRevision };

/**
 * How a listing page is ordered, as far as a vote can move a feature into it (pinned features
 * first in every order, ties by id descending: features.repository.ts `ordered`):
 * - `score`: by `key` descending then id descending (sorts top and votes); `last` is the page's
 *   last item, null when the page is not full (every match is on it);
 * - `trending`: by trending_score descending, nulls last (a feature without votes), then id
 *   descending; `last` as for `score`, its key null when the last item has no votes. The stored
 *   score orders features the same way at every instant (src/lib/rules/trending.ts), so a page
 *   stays right until a vote moves a feature's score;
 * - `fixed`: by something votes do not change (position, dates, comment counts).
 */
export type ListingOrder =
  | { by: "score"; key: "vote_count" | "weighted_score"; last: { id: number; key: number } | null }
  | { by: "trending"; last: { id: number; key: number | null } | null }
  | { by: "fixed" };

/**
 * Which features a listing can show at all, from its query's filter (features.repository.ts
 * `listed`): the board (null: every board), the column (an id, `archived` for column -1, null:
 * every column), the statuses and the tags (any of them; null: no such filter). The text filter
 * `q` is not described: a feature is taken to match it.
 */
export interface ListingFilter {
  boardId: number | null;
  column: number | "archived" | null;
  statuses: readonly string[] | null;
  tagIds: readonly number[] | null;
}

/** What a cached answer shows. */
export type ReadDependencies =
  | { kind: "all" }
  /** Nothing a vote changes (comments, the changelog). */
  | { kind: "not-votes" }
  /**
   * The board document: of what a vote changes it shows only the project's voter_count
   * (feedback-board-api-v3.md, BoardDocument `project.voter_count`).
   */
  | { kind: "board" }
  /** One feature's object. */
  | { kind: "feature"; featureId: number }
  /**
   * One page of features: the ids listed, whether it is the first page, its order and its
   * filter (an answer cached without one counts as listing every feature).
   */
  | { kind: "listing"; ids: readonly number[]; firstPage: boolean; order: ListingOrder; filter?: ListingFilter };

type VoteChange = Extract<ContentChange, { kind: "vote" }>;

/**
 * Whether the voted feature can be among the listing's matches: false only when the vote's
 * record shows it outside the filter (another board, column, status, or none of the tags). A
 * vote does not move a feature between boards, columns, statuses or tags, so such a feature was
 * not listed before the vote and is not after it.
 */
function mayBeListed(change: VoteChange, filter: ListingFilter | undefined): boolean {
  if (!filter) return true;
  const { boardId, columnId, status, tagIds } = change;
  if (filter.boardId !== null && boardId !== undefined && boardId !== filter.boardId) return false;
  if (filter.column === "archived" && status !== undefined && status !== "archived") return false;
  if (typeof filter.column === "number" && columnId !== undefined && columnId !== filter.column) return false;
  if (filter.statuses && status !== undefined && !filter.statuses.includes(status)) return false;
  if (filter.tagIds && tagIds !== undefined && !tagIds.some((id) => filter.tagIds?.includes(id))) return false;
  return true;
}

/** Whether `change` can make an answer with `dependencies` differ from what it shows. */
export function changes(change: ContentChange, dependencies: ReadDependencies): boolean {
  if (change.kind === "all" || dependencies.kind === "all") return true;
  switch (dependencies.kind) {
    case "not-votes":
      return false;
    case "board":
      return change.voterCountMoved !== false;
    case "feature":
      return dependencies.featureId === change.featureId;
    case "listing": {
      if (dependencies.ids.includes(change.featureId)) return true;
      // A feature the listing cannot show moves none of its pages.
      if (!mayBeListed(change, dependencies.filter)) return false;
      const { order } = dependencies;
      if (order.by === "fixed") return false;
      // On a later page a feature above it may drop into it (a withdrawal) or one below climb.
      if (!dependencies.firstPage) return true;
      // A feature not on a first page rises only with a vote cast, and only a full page can
      // take it. Pinned features come first: an unlisted one that beats the last item by key
      // may be pinned, so it is counted as entering.
      if (!change.cast) return false;
      if (order.last === null) return false;
      if (order.by === "trending") {
        // A cast leaves its feature with a score, which ranks above a last item without votes;
        // a record without the score counts as entering.
        const key = change.trending_score;
        if (key === undefined || key === null || order.last.key === null) return true;
        return key > order.last.key || (key === order.last.key && change.featureId > order.last.id);
      }
      const key = change[order.key];
      return key > order.last.key || (key === order.last.key && change.featureId > order.last.id);
    }
  }
}

/**
 * Changes kept per project in a process: the newest KEPT_PER_PROJECT seqs at least (older ones are
 * fetched again if ever needed). The log is trimmed once it holds TRIM_SLACK more, so that a busy
 * project pays one pass over its log per TRIM_SLACK changes, not a sort of it per change.
 */
export const KEPT_PER_PROJECT = 4096;
const TRIM_SLACK = 1024;

interface ProjectLog {
  epoch: string;
  /** seq -> change, for the seqs fetched so far. */
  changes: Map<number, ContentChange>;
  /** The highest seq fetched. */
  newest: number;
  pending: Map<string, Promise<ContentChange[] | null>>;
}

/**
 * This process's copy of the projects' change records (ContentRevisions.changesBetween): each
 * range is read from the shared store once, whatever the number of answers checked against it.
 */
export class ContentChangeLog {
  private readonly projects = new Map<number, ProjectLog>();

  /**
   * The changes of project `projectId` after revision `from` up to and including `to` (same
   * epoch), oldest first; null when they are not all known (another epoch, or records expired):
   * the caller then treats the interval as a change of everything.
   */
  async between(
    store: Pick<ContentRevisions, "changesBetween">,
    projectId: number,
    from: RevisionPosition,
    to: RevisionPosition,
  ): Promise<ContentChange[] | null> {
    if (from.epoch !== to.epoch || from.seq > to.seq) return null;
    let log = this.projects.get(projectId);
    if (!log || log.epoch !== to.epoch) {
      log = { epoch: to.epoch, changes: new Map(), newest: 0, pending: new Map() };
      this.projects.set(projectId, log);
    }
    const missing: number[] = [];
    for (let seq = from.seq + 1; seq <= to.seq; seq++) if (!log.changes.has(seq)) missing.push(seq);
    if (missing.length > 0) {
      const first = missing[0]!;
      const last = missing[missing.length - 1]!;
      const flight = `${first}-${last}`;
      if (!store.changesBetween) return null;
      let fetching = log.pending.get(flight);
      if (!fetching) {
        fetching = store.changesBetween(projectId, `${to.epoch}:${first - 1}`, `${to.epoch}:${last}`);
        log.pending.set(flight, fetching);
      }
      const fetched = await fetching.finally(() => log.pending.delete(flight));
      if (fetched === null) return null;
      for (const [i, change] of fetched.entries()) log.changes.set(first + i, change);
      log.newest = Math.max(log.newest, last);
      if (log.changes.size > KEPT_PER_PROJECT + TRIM_SLACK) {
        const keepFrom = log.newest - KEPT_PER_PROJECT + 1;
        for (const seq of log.changes.keys()) if (seq < keepFrom) log.changes.delete(seq);
      }
    }
    const result: ContentChange[] = [];
    for (let seq = from.seq + 1; seq <= to.seq; seq++) {
      const change = log.changes.get(seq);
      if (change === undefined) return null;
      result.push(change);
    }
    return result;
  }
}

/** Something cached at a content revision, and what it shows (a cached answer, a listing total). */
export interface Revisioned {
  /** The content revision it is known to be current at (`epoch:seq`). */
  revision: string;
  readonly dependencies: ReadDependencies;
}

/**
 * Whether `entry` still shows project `projectId` as of content revision `revision`: made at it
 * or later, or every change since leaves it as it is (changes()). The changes are read through
 * `log` (one read per range and process). An entry found current is stamped with `revision`, so
 * the next reader checks only newer changes.
 */
export async function isCurrentAt(
  entry: Revisioned,
  revision: string,
  projectId: number,
  log: ContentChangeLog,
  store: Pick<ContentRevisions, "changesBetween">,
): Promise<boolean> {
  if (entry.revision === revision) return true;
  const now = parseRevision(revision);
  const made = parseRevision(entry.revision);
  if (!now || !made || now.epoch !== made.epoch) return false;
  if (made.seq >= now.seq) return true;
  const since = await log.between(store, projectId, made, now);
  if (since === null || since.some((change) => changes(change, entry.dependencies))) return false;
  // Another reader may have stamped it further meanwhile.
  if ((parseRevision(entry.revision)?.seq ?? 0) < now.seq) entry.revision = revision;
  return true;
}
