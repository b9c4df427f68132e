/**
 * What every step of an import's write shares (imports-v3.md, "How an import runs" rules 4-5):
 * the transaction, the counts and warnings, progress, and the source-id mapping (import_sources)
 * loaded once and written back in batches.
 */
import { sql, type Transaction } from "kysely";
import type { Database, ImportSourceKind } from "../../../../db/schema.ts";
import { IMPORT_COUNT_KINDS, type ImportCountKind, type ImportOptions, type ImportSourceName, type ImportWarning } from "../import-data.ts";

/** Warnings kept in full (ImportObject.warnings); the rest are only counted (warning_count). */
export const WARNINGS_KEPT = 1000;
/** onProgress is called after about this many records. */
export const PROGRESS_EVERY = 500;
/** Rows per multi-row statement. */
export const BATCH = 1000;

export type Counts = Record<ImportCountKind, { created: number; updated: number; skipped: number }>;

/** A source id's mapping: the row made (a vote: its feature, `voter` its voter). */
export interface Mapped {
  target: number;
  voter: number | null;
}

export interface WriteContext {
  trx: Transaction<Database>;
  projectId: number;
  source: ImportSourceName;
  options: ImportOptions;
  now: Date;
  counts: Counts;
  /** Existing mappings of this project and source, by kind, then source id. */
  mapped: Record<ImportSourceKind, Map<string, Mapped>>;
  warn(path: string, message: string): void;
  /** `n` more records handled (progress). */
  tick(n?: number): void;
  /** Remembers a new mapping (written by flushMappings). */
  remember(kind: ImportSourceKind, sourceId: string, target: number, voter?: number | null): void;
}

/** A fresh WriteContext after loading the project's mappings for `source`. */
export async function openContext(args: {
  trx: Transaction<Database>;
  projectId: number;
  source: ImportSourceName;
  options: ImportOptions;
  now: Date;
  total: number;
  onProgress?: ((done: number, total: number) => void) | undefined;
}): Promise<WriteContext & { warnings: ImportWarning[]; warningCount(): number; flushMappings(): Promise<void>; finish(): void }> {
  const counts = Object.fromEntries(IMPORT_COUNT_KINDS.map((k) => [k, { created: 0, updated: 0, skipped: 0 }])) as Counts;
  const mapped: Record<ImportSourceKind, Map<string, Mapped>> = {
    board: new Map(),
    tag: new Map(),
    voter: new Map(),
    feature: new Map(),
    vote: new Map(),
    comment: new Map(),
    release: new Map(),
  };
  const rows = await args.trx
    .selectFrom("import_sources")
    .select(["kind", "source_id", "target_id", "target_voter_id"])
    .where("project_id", "=", args.projectId)
    .where("source", "=", args.source)
    .execute();
  for (const row of rows) mapped[row.kind].set(row.source_id, { target: row.target_id, voter: row.target_voter_id });

  const warnings: ImportWarning[] = [];
  let warningTotal = 0;
  let done = 0;
  let reported = 0;
  const pending: { kind: ImportSourceKind; source_id: string; target_id: number; target_voter_id: number | null }[] = [];
  // Arrays through unnest: one statement and four parameters per 10,000 mappings, where a
  // multi-row VALUES binds four parameters per row (a 100,000-vote import's mappings took 7.5 s).
  const flushMappings = async () => {
    while (pending.length > 0) {
      const batch = pending.splice(0, 10 * BATCH);
      await sql`INSERT INTO import_sources (project_id, source, kind, source_id, target_id, target_voter_id)
        SELECT ${args.projectId}::int, ${args.source}::text, m.kind, m.source_id, m.target_id, m.target_voter_id
        FROM unnest(${batch.map((row) => row.kind)}::text[], ${batch.map((row) => row.source_id)}::text[],
          ${batch.map((row) => row.target_id)}::int[], ${batch.map((row) => row.target_voter_id)}::int[])
          AS m(kind, source_id, target_id, target_voter_id)
        ON CONFLICT (project_id, source, kind, source_id)
        DO UPDATE SET target_id = excluded.target_id, target_voter_id = excluded.target_voter_id`.execute(args.trx);
    }
  };
  return {
    trx: args.trx,
    projectId: args.projectId,
    source: args.source,
    options: args.options,
    now: args.now,
    counts,
    mapped,
    warnings,
    warningCount: () => warningTotal,
    warn(path, message) {
      warningTotal += 1;
      if (warnings.length < WARNINGS_KEPT) warnings.push({ path, message });
    },
    tick(n = 1) {
      done += n;
      if (args.onProgress && done - reported >= PROGRESS_EVERY) {
        reported = done;
        args.onProgress(done, args.total);
      }
    },
    finish() {
      args.onProgress?.(args.total, args.total);
    },
    remember(kind, sourceId, target, voter = null) {
      mapped[kind].set(sourceId, { target, voter });
      pending.push({ kind, source_id: sourceId, target_id: target, target_voter_id: voter });
    },
    flushMappings,
  };
}

/** A source time (RFC 3339) as a Date; `fallback` when null; undefined when it does not parse. */
export function parseTime(value: string | null, fallback: Date): Date | undefined {
  if (value === null) return fallback;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : new Date(time);
}

/** The ids among `ids` that still exist in `table` (a mapping whose target is gone is a tombstone). */
export async function existingIds(
  trx: Transaction<Database>,
  table: "boards" | "tags" | "voters" | "features" | "comments" | "releases",
  projectId: number,
  ids: Iterable<number>,
): Promise<Set<number>> {
  const list = [...new Set(ids)];
  const found = new Set<number>();
  for (let i = 0; i < list.length; i += 10_000) {
    const rows = await sql<{ id: number }>`SELECT id FROM ${sql.table(table)}
      WHERE project_id = ${projectId} AND id = any(${list.slice(i, i + 10_000)}::int[])`.execute(trx);
    for (const row of rows.rows) found.add(row.id);
  }
  return found;
}

/**
 * `text` cut to `max` characters (code points, as the contract's limits count them, so no
 * surrogate pair is split); `cut` tells whether anything was dropped.
 */
export function cutText(text: string, max: number): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  const points = Array.from(text);
  return points.length <= max ? { text, cut: false } : { text: points.slice(0, max).join(""), cut: true };
}
