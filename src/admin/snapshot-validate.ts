/**
 * Validation of a snapshot document (docs/contract/project-snapshot.md, "Document"): the zod shape
 * first,
 * then every rule that spans objects (snapshot-references.ts). All faults are collected and
 * reported together with their JSON paths ("Commands"), so an author fixes a file in one pass.
 * Nothing here looks at the database: importSnapshot checks slug, key and token collisions
 * inside its transaction.
 */
import type { z } from "zod";
import { slugify } from "../lib/rules/slug.ts";
import { type SnapshotDocument, snapshotSchema } from "./snapshot.schema.ts";
import { checkReferences, type ReferenceOptions } from "./snapshot-references.ts";
import { boardSlug, type SnapshotIssue } from "./snapshot-rules.ts";

export type { SnapshotIssue } from "./snapshot-rules.ts";

/** Thrown when a snapshot is refused; `issues` lists every fault found. Nothing was written. */
export class SnapshotValidationError extends Error {
  readonly issues: SnapshotIssue[];

  constructor(issues: SnapshotIssue[]) {
    const lines = issues.map((issue) => `${issue.path}: ${issue.message}`);
    super(`snapshot refused (${issues.length} ${issues.length === 1 ? "fault" : "faults"}):\n${lines.join("\n")}`);
    this.name = "SnapshotValidationError";
    this.issues = issues;
  }
}

/** Renders a zod path as a JSON path: `features[3].column`; the document itself is "(document)". */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (typeof part === "string" && /^[A-Za-z_$][\w$]*$/.test(part)) out += out === "" ? part : `.${part}`;
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out === "" ? "(document)" : out;
}

function zodIssues(error: z.ZodError): SnapshotIssue[] {
  return error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
}

/**
 * Parses and checks a snapshot. Returns the document with every default filled in (positions,
 * board and release slugs, custom-board feature status included); throws SnapshotValidationError
 * listing every fault: the shape faults alone when the shape is wrong, else every cross-object
 * fault. Does not look at the database (importSnapshot checks slug, key and token collisions
 * inside its transaction) or at DNS. `options`: see ReferenceOptions.
 */
export function validateSnapshot(input: unknown, options: ReferenceOptions = {}): SnapshotDocument {
  const parsed = snapshotSchema.safeParse(input);
  if (!parsed.success) throw new SnapshotValidationError(zodIssues(parsed.error));
  const doc = parsed.data;
  const issues = checkReferences(doc, options);
  if (issues.length > 0) throw new SnapshotValidationError(issues);
  fillDerivedDefaults(doc);
  return doc;
}

/** Fills the defaults that depend on other parts of the document (positions, slugs, status). */
function fillDerivedDefaults(doc: SnapshotDocument) {
  const boardKind = new Map(doc.boards.map((board) => [board.ref, board.kind]));
  for (const board of doc.boards) {
    board.slug = boardSlug(board);
    board.columns.forEach((column, index) => {
      column.position ??= index;
    });
  }
  // Features without a position keep their file order within their board.
  const perBoard = new Map<string, number>();
  for (const feature of doc.features) {
    const next = perBoard.get(feature.board) ?? 0;
    perBoard.set(feature.board, next + 1);
    feature.position ??= next;
    if (boardKind.get(feature.board) === "custom") feature.status ??= "open";
  }
  for (const release of doc.releases) release.slug ??= slugify(release.name);
}
