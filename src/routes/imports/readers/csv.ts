/**
 * The CSV source (imports-v3.md, "Sources", CSV): `features.csv`, and from a zip also
 * `votes.csv` and `comments.csv`. A row that cannot be used (no title, a date that does not
 * parse, a vote or comment without its required cells) is skipped with a warning naming
 * `<file>:<line>`; a missing required column fails the file. People are `email:<lower-case
 * email>`, or `name:<name>` when a row gives a name only; boards and tags are keyed by their
 * lower-cased name, spelt as first seen.
 */
import { ImportFileError } from "../import-data.ts";
import type { ImportCollector } from "./collector.ts";
import { readCsvTable } from "./csv-table.ts";
import { parseSourceDate } from "./dates.ts";

export const CSV_FILES = new Set(["features.csv", "votes.csv", "comments.csv"]);

/** The person a row names (email first), added to the collector; null when it names none. */
function personOf(c: ImportCollector, email: string | undefined, name: string | undefined, path: string): string | null {
  const cleanEmail = email ? email : null;
  const cleanName = name ? name : null;
  if (cleanEmail === null && cleanName === null) return null;
  const sourceId = cleanEmail !== null ? `email:${cleanEmail.toLowerCase()}` : `name:${cleanName}`;
  c.addPerson({ sourceId, ssoId: null, name: cleanName, email: cleanEmail, role: "voter", company: null, deleted: false, path });
  return sourceId;
}

/** `created_at` of a row: RFC 3339 UTC or null when empty; undefined (skip the row) when it does not parse. */
function createdAtOf(
  c: ImportCollector,
  kind: "features" | "votes" | "comments",
  value: string | undefined,
  path: string,
): string | null | undefined {
  if (!value) return null;
  const parsed = parseSourceDate(value);
  if (parsed === null) c.skip(kind, path, `created_at ${JSON.stringify(value)} is neither RFC 3339 nor YYYY-MM-DD HH:MM:SS: row skipped`);
  return parsed ?? undefined;
}

export function readCsvSource(files: Map<string, Uint8Array>, c: ImportCollector): void {
  const features = files.get("features.csv");
  if (features === undefined) throw new ImportFileError("features.csv: missing from the zip (a CSV import needs features.csv)");
  const table = readCsvTable(features, "features.csv", ["title"], c);
  if (table.columns.includes("vote_count")) {
    c.warn("features.csv", "the vote_count column is ignored: a count is not a vote (no voter); give votes in votes.csv");
  }
  const boards = new Map<string, string>();
  const tags = new Map<string, string>();
  for (const { line, cells } of table.rows) {
    const path = `features.csv:${line}`;
    if (!cells.title) {
      c.skip("features", path, "a row without title: skipped");
      continue;
    }
    const createdAt = createdAtOf(c, "features", cells.created_at, path);
    if (createdAt === undefined) continue;
    const sourceId = cells.source_id || null;
    if (sourceId === null)
      c.warn(path, "no source_id: this row cannot be matched on a later import (importing the file again makes a second copy)");
    let boardSourceId: string | null = null;
    if (cells.board) {
      boardSourceId = cells.board.toLowerCase();
      if (!boards.has(boardSourceId)) {
        boards.set(boardSourceId, cells.board);
        c.data.boards.push({ sourceId: boardSourceId, name: cells.board, path });
      }
    }
    const tagSourceIds: string[] = [];
    for (const name of (cells.tags ?? "").split(",").map((part) => part.trim())) {
      const key = name.toLowerCase();
      if (name === "" || tagSourceIds.includes(key)) continue;
      if (!tags.has(key)) {
        tags.set(key, name);
        c.data.tags.push({ sourceId: key, name, color: null, path });
      }
      tagSourceIds.push(key);
    }
    c.data.features.push({
      sourceId,
      title: cells.title,
      description: cells.description ?? "",
      status: cells.status || null,
      boardSourceId,
      tagSourceIds,
      authorSourceId: personOf(c, cells.author_email, cells.author_name, path),
      createdAt,
      developerResponse: cells.developer_response || null,
      responseIsDenial: false,
      targetDate: null,
      approved: true,
      mergedIntoSourceId: null,
      path,
    });
  }

  const votes = files.get("votes.csv");
  if (votes !== undefined) {
    for (const { line, cells } of readCsvTable(votes, "votes.csv", ["feature_source_id", "voter_email"], c).rows) {
      const path = `votes.csv:${line}`;
      if (!cells.feature_source_id || !cells.voter_email) {
        c.skip("votes", path, `a row without ${cells.feature_source_id ? "voter_email" : "feature_source_id"}: skipped`);
        continue;
      }
      const createdAt = createdAtOf(c, "votes", cells.created_at, path);
      if (createdAt === undefined) continue;
      const personSourceId = personOf(c, cells.voter_email, cells.voter_name, path) as string;
      c.data.votes.push({ featureSourceId: cells.feature_source_id, personSourceId, createdAt, path });
    }
  }

  const comments = files.get("comments.csv");
  if (comments !== undefined) {
    for (const { line, cells } of readCsvTable(comments, "comments.csv", ["feature_source_id", "content"], c).rows) {
      const path = `comments.csv:${line}`;
      if (!cells.feature_source_id || !cells.content) {
        c.skip("comments", path, `a row without ${cells.feature_source_id ? "content" : "feature_source_id"}: skipped`);
        continue;
      }
      const createdAt = createdAtOf(c, "comments", cells.created_at, path);
      if (createdAt === undefined) continue;
      c.data.comments.push({
        sourceId: cells.source_id || null,
        featureSourceId: cells.feature_source_id,
        parentSourceId: cells.parent_source_id || null,
        personSourceId: personOf(c, cells.author_email, cells.author_name, path),
        content: cells.content,
        createdAt,
        path,
      });
    }
  }
}
