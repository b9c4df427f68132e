/**
 * The repository reads whole on its own (docs/architecture.md, "Conventions": a rule names the
 * section of a document in this repository it comes from). No source, script, migration, test or
 * document (README.md, docs/ except the contract copies in docs/contract/) refers to a design
 * note or a spec folder outside the repository, or to a numbered issue or item of a tracker: the
 * contracts are in docs/contract/, the design in docs/architecture.md, and history in git.
 *
 * test/contract-docs.test.ts alone may name the shared folder the contract copies come from: its
 * job is to compare them with their originals there.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const self = relative(root, import.meta.filename);

/** Text files under the checked folders, as paths from the repository root. */
function checkedFiles(): string[] {
  const files = ["README.md"];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (path !== "docs/contract") walk(path);
      } else if (/\.(ts|md)$/.test(entry.name)) {
        files.push(path);
      }
    }
  };
  for (const dir of ["src", "scripts", "db", "test", "docs"]) walk(dir);
  return files.filter((file) => file !== self).sort();
}

/** What no file may refer to, each with the files allowed to (none unless named). */
const forbidden: ReadonlyArray<{ name: string; pattern: RegExp; allowedIn?: string[] }> = [
  { name: "a design note outside the repository", pattern: /\bdesign\.md\b/ },
  { name: "a spec folder outside the repository", pattern: /(^|[^\w.-])spec\/[\w.-]/ },
  { name: "the shared folder beside the repository", pattern: /\.\.\/shared\b/, allowedIn: ["test/contract-docs.test.ts"] },
  { name: "a numbered issue or item", pattern: /\b(issues?|items?)\s+#?\d+/i },
];

/** `path:line: text` for every line of `files` that `pattern` matches. */
function offendingLines(files: string[], pattern: RegExp): string[] {
  const found: string[] = [];
  for (const file of files) {
    readFileSync(join(root, file), "utf8")
      .split("\n")
      .forEach((line, index) => {
        if (pattern.test(line)) found.push(`${file}:${index + 1}: ${line.trim()}`);
      });
  }
  return found;
}

describe("references stay inside the repository", () => {
  const files = checkedFiles();

  it("checks the source, scripts, migrations, tests and documents", () => {
    for (const expected of ["README.md", "src/app.ts", "scripts/admin.ts", "db/connect.ts", "docs/architecture.md"]) {
      expect(files).toContain(expected);
    }
    expect(files.some((file) => file.startsWith("test/"))).toBe(true);
    expect(files.some((file) => file.startsWith("docs/contract/"))).toBe(false);
  });

  it.each(forbidden)("no reference to $name", ({ pattern, allowedIn = [] }) => {
    expect(
      offendingLines(
        files.filter((file) => !allowedIn.includes(file)),
        pattern,
      ),
    ).toEqual([]);
  });
});
