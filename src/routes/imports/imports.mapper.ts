/** Rows of `imports` -> ImportObject (imports-v3.md, "Routes"). */
import { rfc3339, rfc3339OrNull } from "../../lib/http/timestamps.ts";
import { IMPORT_COUNT_KINDS, type ImportSourceName } from "./import-data.ts";
import type { ImportObject } from "./imports.owner.schemas.ts";
import type { ImportRow } from "./imports.repository.ts";

const zero = { created: 0, updated: 0, skipped: 0 };

/**
 * The ImportObject of `row`. `live` is progress this process holds in memory for a job it is
 * running (the embedded database, where the job's transaction holds the one connection); it
 * replaces the row's while the job runs.
 */
export function toImport(row: ImportRow, live?: { done: number; total: number | null }): ImportObject {
  // Rebuilt in the contract's order: jsonb gives keys back sorted by length (created, skipped, updated).
  const counts = Object.fromEntries(
    IMPORT_COUNT_KINDS.map((kind) => {
      const { created, updated, skipped } = row.counts?.[kind] ?? zero;
      return [kind, { created, updated, skipped }];
    }),
  ) as ImportObject["counts"];
  const progress = row.status === "running" && live ? live : { done: row.progress_done, total: row.progress_total };
  return {
    id: row.id,
    source: row.source as ImportSourceName,
    dry_run: row.dry_run,
    status: row.status,
    options: { boards: row.options.boards, status_map: row.options.status_map as ImportObject["options"]["status_map"] },
    progress,
    counts,
    warnings: row.warnings,
    warning_count: row.warning_count,
    error: row.error as ImportObject["error"],
    created_at: rfc3339(row.created_at),
    started_at: rfc3339OrNull(row.started_at),
    finished_at: rfc3339OrNull(row.finished_at),
  };
}
