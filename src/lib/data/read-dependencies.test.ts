import { describe, expect, it } from "vitest";
import type { ContentChange } from "../../store/store.types.ts";
import { ContentChangeLog, changes, parseRevision, type ReadDependencies } from "./read-dependencies.ts";

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

  it("parses epoch:seq revisions and nothing else", () => {
    expect(parseRevision("a-b:c:12")).toEqual({ epoch: "a-b:c", seq: 12 });
    expect(parseRevision("3f0c-uuid")).toBeNull();
    expect(parseRevision(":4")).toBeNull();
  });
});
