import { describe, expect, it } from "vitest";
import type { ContentChange } from "../../store/store.types.ts";
import {
  ContentChangeLog,
  changes,
  KEPT_PER_PROJECT,
  type ListingFilter,
  parseRevision,
  type ReadDependencies,
} from "./read-dependencies.ts";

const vote = (featureId: number, cast: boolean, count: number): Extract<ContentChange, { kind: "vote" }> => ({
  kind: "vote",
  featureId,
  cast,
  vote_count: count,
  weighted_score: count,
});
const top = (ids: number[], last: { id: number; key: number } | null, firstPage = true): ReadDependencies => ({
  kind: "listing",
  ids,
  firstPage,
  order: { by: "score", key: "vote_count", last },
});

describe("which answers a change retires", () => {
  it("a change of everything, or an answer that did not say what it shows, always", () => {
    expect(changes({ kind: "all" }, { kind: "not-votes" })).toBe(true);
    expect(changes(vote(1, true, 1), { kind: "all" })).toBe(true);
  });

  it("a vote: the feature's own object and pages listing it, not comments or other features", () => {
    expect(changes(vote(1, true, 1), { kind: "feature", featureId: 1 })).toBe(true);
    expect(changes(vote(1, true, 1), { kind: "feature", featureId: 2 })).toBe(false);
    expect(changes(vote(1, true, 1), { kind: "not-votes" })).toBe(false);
    expect(changes(vote(1, false, 0), { kind: "listing", ids: [3, 1], firstPage: true, order: { by: "fixed" } })).toBe(true);
    expect(changes(vote(1, true, 1), { kind: "listing", ids: [3, 2], firstPage: false, order: { by: "fixed" } })).toBe(false);
  });

  it("a score-ordered first page: only a vote cast that beats its last item (ties by higher id)", () => {
    const page = top([9, 5], { id: 5, key: 10 });
    expect(changes(vote(7, true, 9), page)).toBe(false);
    expect(changes(vote(4, true, 10), page)).toBe(false);
    expect(changes(vote(6, true, 10), page)).toBe(true);
    expect(changes(vote(7, true, 11), page)).toBe(true);
    // A withdrawal only lowers an unlisted feature; a page that is not full lists every match.
    expect(changes(vote(7, false, 50), page)).toBe(false);
    expect(changes(vote(7, true, 50), top([9, 5], null))).toBe(false);
  });

  it("a listing's filter: a vote on a feature it cannot show (board, column, status, tags) retires none of its pages", () => {
    const at = (where: Partial<Extract<ContentChange, { kind: "vote" }>>) => ({ ...vote(7, true, 50), ...where });
    const filtered = (filter: ListingFilter, firstPage = true): ReadDependencies =>
      ({
        ...top([9, 5], { id: 5, key: 10 }, firstPage),
        filter,
      }) as ReadDependencies;
    const board = { boardId: 4, column: null, statuses: null, tagIds: null };
    const placed = { boardId: 4, columnId: 12, status: "planned", tagIds: [3, 16] };
    expect(changes(at(placed), filtered(board))).toBe(true);
    expect(changes(at({ ...placed, boardId: 5 }), filtered(board))).toBe(false);
    // Later pages too, and withdrawals: the feature was never among the matches.
    expect(changes(at({ ...placed, boardId: 5, cast: false }), filtered(board, false))).toBe(false);
    expect(changes(at({ ...placed, boardId: 5 }), filtered({ ...board, boardId: null }))).toBe(true);
    expect(changes(at(placed), filtered({ ...board, tagIds: [16, 20] }))).toBe(true);
    expect(changes(at(placed), filtered({ ...board, tagIds: [20] }))).toBe(false);
    expect(changes(at({ ...placed, tagIds: [] }), filtered({ ...board, tagIds: [16] }))).toBe(false);
    expect(changes(at(placed), filtered({ ...board, statuses: ["planned", "in_progress"] }))).toBe(true);
    expect(changes(at(placed), filtered({ ...board, statuses: ["in_progress"] }))).toBe(false);
    expect(changes(at(placed), filtered({ ...board, column: 12 }))).toBe(true);
    expect(changes(at(placed), filtered({ ...board, column: 13 }))).toBe(false);
    expect(changes(at(placed), filtered({ ...board, column: "archived" }))).toBe(false);
    expect(changes(at({ ...placed, status: "archived", columnId: null }), filtered({ ...board, column: "archived" }))).toBe(true);
    // A record without the feature's place (written before it carried one) may be listed anywhere.
    expect(changes(vote(7, true, 50), filtered({ boardId: 5, column: 13, statuses: ["closed"], tagIds: [20] }))).toBe(true);
    // A page listing the feature is retired whatever it says of the filter.
    expect(changes(at({ ...placed, featureId: 9, boardId: 5 }), filtered(board))).toBe(true);
  });

  it("a later score-ordered page: any vote that may move a feature", () => {
    expect(changes(vote(7, false, 0), top([9, 5], { id: 5, key: 10 }, false))).toBe(true);
  });

  it("a trending first page: only a vote cast whose new score beats its last item (nulls last, ties by higher id)", () => {
    const trending = (last: { id: number; key: number | null } | null, firstPage = true): ReadDependencies => ({
      kind: "listing",
      ids: [9, 5],
      firstPage,
      order: { by: "trending", last },
    });
    const cast = (featureId: number, score: number | null | undefined): ContentChange => ({
      ...vote(featureId, true, 1),
      ...(score === undefined ? {} : { trending_score: score }),
    });
    const page = trending({ id: 5, key: 100.25 });
    expect(changes(cast(7, 100.24), page)).toBe(false);
    expect(changes(cast(4, 100.25), page)).toBe(false);
    expect(changes(cast(6, 100.25), page)).toBe(true);
    expect(changes(cast(7, 100.26), page)).toBe(true);
    // A listed feature's vote always; a withdrawal of an unlisted one never lifts it.
    expect(changes({ ...vote(9, false, 0), trending_score: null }, page)).toBe(true);
    expect(changes({ ...vote(7, false, 0), trending_score: 500 }, page)).toBe(false);
    // A last item without votes is beaten by any cast; a page that is not full lists every match.
    expect(changes(cast(4, 1), trending({ id: 5, key: null }))).toBe(true);
    expect(changes(cast(7, 500), trending(null))).toBe(false);
    // A change recorded without the score counts as entering; a later page by any vote.
    expect(changes(cast(7, undefined), page)).toBe(true);
    expect(changes({ ...vote(7, false, 0), trending_score: 1 }, trending({ id: 5, key: 100 }, false))).toBe(true);
  });

  it("the board document: only a vote that moved the project's voter count", () => {
    expect(changes({ ...vote(7, true, 3), voterCountMoved: false }, { kind: "board" })).toBe(false);
    expect(changes({ ...vote(7, true, 1), voterCountMoved: true }, { kind: "board" })).toBe(true);
    expect(changes({ ...vote(7, false, 0), voterCountMoved: true }, { kind: "board" })).toBe(true);
    // Recorded without saying (an older record): counted as moved.
    expect(changes(vote(7, true, 1), { kind: "board" })).toBe(true);
    expect(changes({ kind: "all" }, { kind: "board" })).toBe(true);
  });
});

describe("content change log", () => {
  it("reads each range once and answers null when the store no longer has it", async () => {
    let reads = 0;
    const kept: ContentChange[] = [vote(1, true, 1), { kind: "all" }];
    const store = {
      changesBetween: async (_projectId: number, from: string, to: string) => {
        reads++;
        const [a, b] = [parseRevision(from)!, parseRevision(to)!];
        return a.seq >= 3 ? kept.slice(a.seq - 3, b.seq - 3) : null;
      },
    };
    const log = new ContentChangeLog();
    const at = (seq: number) => ({ epoch: "e", seq });
    expect(await log.between(store, 1, at(3), at(5))).toEqual(kept);
    expect(await log.between(store, 1, at(4), at(5))).toEqual([{ kind: "all" }]);
    expect(reads).toBe(1);
    expect(await log.between(store, 1, at(1), at(5))).toBeNull();
    expect(await log.between(store, 1, { epoch: "other", seq: 3 }, at(5))).toBeNull();
    expect(await log.between({}, 2, at(1), at(2))).toBeNull();
  });

  it("keeps at least the newest KEPT_PER_PROJECT changes of a busy project and reads older ones again", async () => {
    const ranges: string[] = [];
    const store = {
      changesBetween: async (_projectId: number, from: string, to: string) => {
        ranges.push(`${from}-${to}`);
        const [a, b] = [parseRevision(from)!.seq, parseRevision(to)!.seq];
        return Array.from({ length: b - a }, (_, i) => vote(a + i + 1, true, 1));
      },
    };
    const log = new ContentChangeLog();
    const at = (seq: number) => ({ epoch: "e", seq });
    // One write at a time, each read by the next answer checked: 3x the kept changes.
    const total = 3 * KEPT_PER_PROJECT;
    for (let seq = 1; seq <= total; seq++) expect(await log.between(store, 1, at(seq - 1), at(seq))).toHaveLength(1);
    expect(ranges).toHaveLength(total);
    // The newest KEPT_PER_PROJECT are still held: no read of the store.
    const newest = await log.between(store, 1, at(total - KEPT_PER_PROJECT), at(total));
    expect(newest?.map((change) => (change.kind === "vote" ? change.featureId : 0))).toEqual(
      Array.from({ length: KEPT_PER_PROJECT }, (_, i) => total - KEPT_PER_PROJECT + i + 1),
    );
    expect(ranges).toHaveLength(total);
    // An old range was dropped: read again, in one range.
    expect(await log.between(store, 1, at(10), at(12))).toHaveLength(2);
    expect(ranges.slice(total)).toEqual(["e:10-e:12"]);
  });

  it("parses epoch:seq revisions and nothing else", () => {
    expect(parseRevision("a-b:c:12")).toEqual({ epoch: "a-b:c", seq: 12 });
    expect(parseRevision("3f0c-uuid")).toBeNull();
    expect(parseRevision(":4")).toBeNull();
  });
});
