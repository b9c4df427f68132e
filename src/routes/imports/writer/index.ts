// PLACEHOLDER: replaced by the readers/writer branch
/**
 * The import writer's surface (imports-v3.md, "Mapping"); this file only declares the signature
 * the job codes against until the writer is merged.
 */
import type { Transaction } from "kysely";
import type { Database } from "../../../../db/schema.ts";
import type { ImportCountKind, ImportData, ImportOptions, ImportSourceName, ImportWarning } from "../import-data.ts";

export type ImportCounts = Record<ImportCountKind, { created: number; updated: number; skipped: number }>;

/** Writes `data` into project `projectId` inside `trx` (never commits). */
export async function writeImport(
  _trx: Transaction<Database>,
  _input: {
    projectId: number;
    source: ImportSourceName;
    data: ImportData;
    options: ImportOptions;
    now: Date;
    onProgress?: (done: number, total: number) => void;
  },
): Promise<{ counts: ImportCounts; warnings: ImportWarning[]; warningCount: number }> {
  throw new Error("not built");
}
