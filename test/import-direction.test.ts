/**
 * The dependency direction (docs/architecture.md, "Dependency direction") is enforced by Biome in
 * `npm run check`: each planted file below breaks one rule, and Biome must refuse it. Files are
 * planted beside real modules under a name no other tool reads, linted alone, then removed.
 */
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

function lint(files: Record<string, string>): string {
  const paths = Object.keys(files);
  try {
    for (const [path, text] of Object.entries(files)) writeFileSync(join(root, path), text);
    const run = spawnSync(join(root, "node_modules", ".bin", "biome"), ["lint", "--max-diagnostics=50", ...paths], {
      cwd: root,
      encoding: "utf8",
    });
    return `${run.stdout}${run.stderr}`;
  } finally {
    for (const path of paths) rmSync(join(root, path), { force: true });
  }
}

const violations = [
  ["lib imports an area", "src/lib/data/planted-direction.ts", 'import { createVotesRouter } from "../../routes/votes/index.ts";'],
  ["events imports an area", "src/events/planted-direction.ts", 'import { createVotesRouter } from "../routes/votes/index.ts";'],
  ["middleware imports an area", "src/middleware/planted-direction.ts", 'import { createVotesRouter } from "../routes/votes/index.ts";'],
  ["contract imports lib", "src/contract/planted-direction.ts", 'import { ApiError } from "../lib/http/errors.ts";'],
  ["db imports src", "db/planted-direction.ts", 'import { ApiError } from "../src/lib/http/errors.ts";'],
  [
    "an area imports another's inner file",
    "src/routes/tags/planted-direction.ts",
    'import { castVote } from "../votes/votes.repository.ts";',
  ],
  [
    "an area imports admin/",
    "src/routes/changelog/planted-direction.ts",
    'import { validateSnapshot } from "../../admin/snapshot-validate.ts";',
  ],
  [
    "admin/ imports an area's inner file",
    "src/admin/planted-direction.ts",
    'import { replaceKeys } from "../routes/keys/keys.owner.repository.ts";',
  ],
] as const;

describe("import direction (biome.json)", () => {
  // One Biome run for every planted file: it builds the module graph once.
  const output = lint({
    ...Object.fromEntries(violations.map(([, path, line]) => [path, `${line}\nexport const planted = 1;\n`])),
    "src/routes/comments/planted-direction.ts": 'import { castVote } from "../votes/index.ts";\nexport const planted = castVote;\n',
    "src/admin/planted-index.ts": 'import { replaceKeys } from "../routes/keys/index.ts";\nexport const planted = replaceKeys;\n',
    "src/lib/planted-cycle-a.ts": 'import { b } from "./planted-cycle-b.ts";\nexport const a = () => b;\n',
    "src/lib/planted-cycle-b.ts": 'import { a } from "./planted-cycle-a.ts";\nexport const b = () => a;\n',
  });
  const diagnosticsOf = (path: string) => output.split("\n").filter((line) => line.startsWith(`${path}:`));

  it.each(violations)("refuses: %s", (_name, path) => {
    expect(diagnosticsOf(path).join("\n")).toContain("lint/style/noRestrictedImports");
  });

  it("accepts an area, or admin/, importing an area through its index", () => {
    expect(output).toContain("Checked 12 files");
    expect(diagnosticsOf("src/routes/comments/planted-direction.ts")).toEqual([]);
    expect(diagnosticsOf("src/admin/planted-index.ts")).toEqual([]);
  });

  it("refuses an import cycle", () => {
    expect(diagnosticsOf("src/lib/planted-cycle-a.ts").join("\n")).toContain("lint/suspicious/noImportCycles");
  });
});
