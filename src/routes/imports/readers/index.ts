// PLACEHOLDER: replaced by the readers/writer branch
/**
 * The import readers' surface (imports-v3.md, "Sources"); this file only declares the
 * signatures the job codes against until the readers are merged.
 */
import type { ImportData, ImportSourceName } from "../import-data.ts";

/** Reads one export into ImportData; throws ImportFileError for a file that cannot be read. */
export async function readImportFile(_input: { source: ImportSourceName; file: Uint8Array; fileName: string | null }): Promise<ImportData> {
  throw new Error("not built");
}

/** Fetches Canny's list answers as a zip (errors name `api_key`). */
export async function fetchCannyExport(_input: {
  apiKey: string;
  baseUrl: string;
  fetch: typeof globalThis.fetch;
  signal?: AbortSignal;
}): Promise<Uint8Array> {
  throw new Error("not built");
}
