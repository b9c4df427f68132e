/**
 * The tags of /openapi.json are one list, as the reference page's sidebar shows them: every tag
 * in Title Case (each word capitalized; an acronym such as MCP all capitals), each one declared
 * once in the document's `tags` with its description, and used by some operation or webhook.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../src/app.ts";
import type { AppDeps } from "../src/lib/http/context.ts";
import { buildOpenApiDocument } from "../src/lib/http/openapi-document.ts";

type Operation = { tags?: string[] };
type Document = {
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, Record<string, Operation>>;
};

// The route definitions are all the description needs: no request is served.
const document = buildOpenApiDocument(createApp({} as AppDeps)) as unknown as Document;
const WORD = "(?:[A-Z][a-z0-9]+|[A-Z]{2,})";
const TITLE_CASE = new RegExp(`^${WORD}(?: ${WORD})*$`);

/** Every tag an operation or webhook carries, with where it is. */
function usedTags(): [tag: string, where: string][] {
  const used: [string, string][] = [];
  for (const [section, items] of [
    ["paths", document.paths],
    ["webhooks", document.webhooks ?? {}],
  ] as const) {
    for (const [name, item] of Object.entries(items)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const tag of operation.tags ?? []) used.push([tag, `${section} ${method} ${name}`]);
      }
    }
  }
  return used;
}

describe("OpenAPI tags", () => {
  it("are all Title Case, declared and used", () => {
    const declared = (document.tags ?? []).map((tag) => tag.name);
    for (const name of declared) expect(name, `declared tag ${name}`).toMatch(TITLE_CASE);
    const used = usedTags();
    expect(used.length).toBeGreaterThan(0);
    for (const [tag, where] of used) {
      expect(tag, where).toMatch(TITLE_CASE);
      expect(declared, `${where}: tag ${tag} is not declared`).toContain(tag);
    }
    const usedNames = used.map(([tag]) => tag);
    for (const name of declared) expect(usedNames, `declared tag ${name} is unused`).toContain(name);
    // One list: no tag twice, nor two that differ only by case.
    expect(new Set(declared.map((name) => name.toLowerCase())).size).toBe(declared.length);
    for (const tag of document.tags ?? []) expect(tag.description, tag.name).toEqual(expect.any(String));
  });
});
