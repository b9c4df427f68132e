/**
 * The documentation's links resolve: every markdown link in README.md and docs/*.md (not the
 * contract copies in docs/contract/) to a local file points to one that exists, and a link to a
 * heading (`file.md#anchor`, `#anchor`) names a heading of that file, slugged as GitHub does.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

/** README.md and docs/*.md, as paths from the repository root. */
function documentationFiles(): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`);
  return ["README.md", ...docs];
}

/** The lines of `markdown` outside fenced code blocks. */
function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split("\n").filter((line) => {
    if (line.trimStart().startsWith("```")) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's anchors of the headings of `markdown` (a repeated heading gets -1, -2, ...). */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(markdown)) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  return anchors;
}

/** The local link targets of `markdown`: `[text](target)` not to a URL scheme. */
function localLinks(markdown: string): string[] {
  const targets: string[] = [];
  for (const line of prose(markdown)) {
    for (const match of line.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) targets.push(target);
    }
  }
  return targets;
}

describe("documentation links", () => {
  it.each(documentationFiles())("every local link of %s resolves", (file) => {
    const markdown = readFileSync(join(root, file), "utf8");
    const links = localLinks(markdown);
    const broken: string[] = [];
    for (const link of links) {
      const [path, anchor] = link.split("#") as [string, string | undefined];
      const target = path === "" ? join(root, file) : join(root, dirname(file), path);
      if (!existsSync(target)) {
        broken.push(`${link}: no file ${relative(root, target)}`);
        continue;
      }
      if (anchor !== undefined && statSync(target).isFile() && !anchorsOf(readFileSync(target, "utf8")).has(anchor)) {
        broken.push(`${link}: no heading #${anchor} in ${relative(root, target)}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("README.md links every docs file", () => {
    const readmeLinks = new Set(localLinks(readFileSync(join(root, "README.md"), "utf8")).map((link) => link.split("#")[0]));
    expect(documentationFiles().filter((file) => file !== "README.md" && !readmeLinks.has(file))).toEqual([]);
  });
});
