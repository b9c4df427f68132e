/**
 * Reading an export into ImportData (imports-v3.md, "Sources" and "How an import runs" rules 5,
 * 6 and 8): `readImportFile` picks the reader by `source` and by the file's first bytes (a zip
 * is recognised by its magic number, whatever its name). A file that cannot be read throws
 * ImportFileError saying what and where (`posts.json: not a JSON array`, `features.csv: missing
 * required column title`); a record that cannot be used is skipped with a warning in
 * ImportData.warnings and counted in ImportData.skipped. Canny's API is read into the same zip
 * by `fetchCannyExport` (canny-api.ts), so one path reads both.
 */
import { type ImportData, ImportFileError, type ImportSourceName } from "../import-data.ts";
import { CANNY_FILES, readCanny } from "./canny.ts";
import { ImportCollector, MAX_IMPORT_RECORDS } from "./collector.ts";
import { CSV_FILES, readCsvSource } from "./csv.ts";
import { FIDER_BACKUP_FILES, readFiderBackup, readFiderCsv } from "./fider.ts";
import { isZip, readZipEntries, ZIP_LIMITS, type ZipLimits, type ZipReadStats } from "./zip.ts";

export { type CannyFetch, createGuardedFetch, fetchCannyExport, ImportSourceError } from "./canny-api.ts";
export { MAX_IMPORT_RECORDS } from "./collector.ts";
export { parseSourceDate } from "./dates.ts";
export { ZIP_LIMITS, type ZipLimits, type ZipReadStats } from "./zip.ts";

export interface ReadImportInput {
  source: ImportSourceName;
  file: Uint8Array;
  /** The uploaded file's name, used in messages only (the content decides how it is read). */
  fileName: string | null;
}

/** Bounds a test may lower (rule 6's values by default) and a counter of inflated bytes. */
export interface ReadImportBounds {
  zip?: ZipLimits;
  maxRecords?: number;
  stats?: ZipReadStats;
}

/**
 * Reads one export: Canny (a zip of list answers), Fider (the backup zip, or posts.csv) or CSV
 * (features.csv, or a zip of features.csv, votes.csv, comments.csv). Resolves to the normalised
 * ImportData; rejects with ImportFileError for a file that cannot be read or crosses a bound.
 */
export async function readImportFile(input: ReadImportInput, bounds: ReadImportBounds = {}): Promise<ImportData> {
  const collector = new ImportCollector(input.source, bounds.maxRecords ?? MAX_IMPORT_RECORDS);
  const name = input.fileName ?? "file";
  const zipLimits = bounds.zip ?? ZIP_LIMITS;
  const zipped = isZip(input.file);
  switch (input.source) {
    case "canny":
      if (!zipped) throw new ImportFileError(`${name}: not a zip archive (a Canny import is a zip of the API's list answers)`);
      readCanny(readZipEntries(input.file, name, CANNY_FILES, zipLimits, bounds.stats), collector);
      break;
    case "fider":
      if (zipped) readFiderBackup(readZipEntries(input.file, name, FIDER_BACKUP_FILES, zipLimits, bounds.stats), collector);
      else readFiderCsv(input.file, collector);
      break;
    case "csv":
      readCsvSource(
        zipped ? readZipEntries(input.file, name, CSV_FILES, zipLimits, bounds.stats) : new Map([["features.csv", input.file]]),
        collector,
      );
      break;
    default:
      throw new ImportFileError(`${name}: unknown source ${JSON.stringify(input.source)}`);
  }
  return collector.data;
}
