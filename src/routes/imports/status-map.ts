/**
 * A source's status name as one of the board's six statuses (imports-v3.md, "Mapping",
 * Features, and each source's table under "Sources"). The import's `status_map` wins; then the
 * source's table; a name neither knows is `open` with `known: false`, for the caller's warning.
 */
import type { ImportOptions, ImportSourceName } from "./import-data.ts";

export type ImportStatus = ImportOptions["statusMap"][string];

/** Canny's default statuses (imports-v3.md, "Sources", Canny). */
const CANNY: Record<string, ImportStatus> = {
  open: "open",
  "under review": "open",
  planned: "planned",
  "in progress": "in_progress",
  complete: "done",
  closed: "denied",
};

/** Fider's status names, as the backup's integers are read and as its CSV writes them. */
const FIDER: Record<string, ImportStatus> = {
  open: "open",
  started: "in_progress",
  completed: "done",
  declined: "denied",
  planned: "planned",
};

/**
 * CSV: the six values themselves and the names spreadsheets and other tools use for them,
 * compared lower-cased with spaces and hyphens as `_` ("In progress", "in-progress").
 */
const CSV: Record<string, ImportStatus> = {
  open: "open",
  new: "open",
  under_review: "open",
  planned: "planned",
  in_progress: "in_progress",
  started: "in_progress",
  done: "done",
  complete: "done",
  completed: "done",
  shipped: "done",
  released: "done",
  denied: "denied",
  declined: "denied",
  closed: "denied",
  rejected: "denied",
  archived: "archived",
};

/**
 * Maps `name` (the source's status as ImportFeature.status carries it; null: the source gives
 * none, which is `open`) for `source`. `statusMap` keys match as written, then ignoring case and
 * surrounding spaces.
 */
export function mapSourceStatus(
  source: ImportSourceName,
  name: string | null,
  statusMap: ImportOptions["statusMap"] = {},
): { status: ImportStatus; known: boolean } {
  if (name === null || name.trim() === "") return { status: "open", known: true };
  const exact = statusMap[name];
  if (exact !== undefined) return { status: exact, known: true };
  const lower = name.trim().toLowerCase();
  for (const [key, status] of Object.entries(statusMap)) {
    if (key.trim().toLowerCase() === lower) return { status, known: true };
  }
  const table = source === "canny" ? CANNY : source === "fider" ? FIDER : CSV;
  const key = source === "csv" ? lower.replace(/[\s-]+/g, "_") : lower;
  const status = Object.hasOwn(table, key) ? table[key] : undefined;
  return status === undefined ? { status: "open", known: false } : { status, known: true };
}
