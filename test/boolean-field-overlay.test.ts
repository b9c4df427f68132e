/**
 * src/lib/http/boolean-field-overlay.ts: a reader's has_voted spliced into a cached anonymous body is
 * byte for byte what JSON.stringify writes for the same answer, and bodies the splice cannot
 * handle exactly are refused.
 */
import { describe, expect, it } from "vitest";
import { BooleanFieldOverlay } from "../src/lib/http/boolean-field-overlay.ts";

const feature = (id: number, extra: Record<string, unknown> = {}) => ({
  id,
  heading: `Feature ${id}`,
  has_voted: false,
  tags: [{ id: 7, name: "t" }],
  ...extra,
});

/** The body JSON.stringify writes with has_voted true on `voted`. */
function expected(envelope: { data: unknown }, voted: number[]): string {
  const copy = structuredClone(envelope) as { data: unknown };
  const items = (Array.isArray(copy.data) ? copy.data : [copy.data]) as { id: number; has_voted: boolean }[];
  for (const item of items) item.has_voted = voted.includes(item.id);
  return JSON.stringify(copy);
}

describe("BooleanFieldOverlay", () => {
  it("sets the field on the chosen items of a page, as re-serializing would", () => {
    const envelope = { data: [feature(1), feature(2), feature(30), feature(4)], meta: { page: 1, total: 4 } };
    const overlay = BooleanFieldOverlay.of(JSON.stringify(envelope), "has_voted")!;
    expect(overlay.ids).toEqual([1, 2, 30, 4]);
    for (const voted of [[], [1], [30, 4], [1, 2, 30, 4], [99]]) {
      expect(overlay.render(new Set(voted))).toBe(expected(envelope, voted));
    }
  });

  it("handles a single object in data (a feature's detail)", () => {
    const envelope = { data: feature(5) };
    const overlay = BooleanFieldOverlay.of(JSON.stringify(envelope), "has_voted")!;
    expect(overlay.render(new Set([5]))).toBe(expected(envelope, [5]));
  });

  it("is not misled by the field's text inside string values", () => {
    const tricky = '"has_voted":false, "has_voted": false \\"has_voted\\":false';
    const envelope = { data: [feature(1, { heading: tricky, description: `{${tricky}}` }), feature(2)] };
    const overlay = BooleanFieldOverlay.of(JSON.stringify(envelope), "has_voted")!;
    expect(overlay.render(new Set([2]))).toBe(expected(envelope, [2]));
    expect(overlay.render(new Set([1, 2]))).toBe(expected(envelope, [1, 2]));
  });

  it("refuses bodies it cannot splice exactly", () => {
    const refused = [
      { data: [feature(1), { id: 2, heading: "no field" }] },
      { data: [feature(1), feature(2, { has_voted: true })] },
      { data: [feature(1, { nested: { has_voted: false } })] },
      { data: [{ ...feature(1), id: "1" }] },
    ];
    for (const envelope of refused) expect(BooleanFieldOverlay.of(JSON.stringify(envelope), "has_voted")).toBeUndefined();
    expect(BooleanFieldOverlay.of(JSON.stringify({ data: [feature(1)] }, null, 2), "has_voted")).toBeUndefined();
  });
});
