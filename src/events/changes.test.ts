/** changesBetween: the `changes` of update events (owner-api-v3.md, "Events"). */
import { describe, expect, it } from "vitest";
import { changesBetween } from "./changes.ts";

describe("changesBetween", () => {
  it("lists the fields that differ as {from, to}, deep-comparing arrays", () => {
    const before = { title: "a", tags: [1, 2], status: "open", merged_into: null as number | null };
    const after = { title: "b", tags: [1, 2], status: "open", merged_into: 12 };
    expect(changesBetween(before, after)).toEqual({ title: { from: "a", to: "b" }, merged_into: { from: null, to: 12 } });
  });

  it("is null when nothing differs, and looks only at the given fields", () => {
    expect(changesBetween({ a: 1, b: [2] }, { a: 1, b: [2] })).toBeNull();
    expect(changesBetween({ a: 1, b: 2 }, { a: 1, b: 3 }, ["a"])).toBeNull();
  });
});
