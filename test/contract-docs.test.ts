/**
 * The contract documents are copied into docs/contract/ so the repository reads on its own.
 * Where the shared folder that holds the originals sits beside the project (../shared/spec),
 * every copy must equal its original byte for byte, and every original must have a copy.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const copies = join(root, "docs", "contract");
const originals = join(root, "..", "shared", "spec");

describe.skipIf(!existsSync(originals))("docs/contract", () => {
  // A skipped describe is still collected: read the originals only where they exist.
  const names = existsSync(originals) ? readdirSync(originals).filter((name) => name.endsWith(".md")) : [];

  it("holds a copy of every contract document", () => {
    expect(names.length).toBeGreaterThan(0);
    expect(
      readdirSync(copies)
        .filter((name) => name.endsWith(".md"))
        .sort(),
    ).toEqual([...names].sort());
  });

  it.each(names)("%s equals ../shared/spec", (name) => {
    expect(readFileSync(join(copies, name), "utf8")).toBe(readFileSync(join(originals, name), "utf8"));
  });
});
