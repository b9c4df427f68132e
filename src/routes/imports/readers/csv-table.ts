/**
 * One CSV file as rows of named cells (imports-v3.md, "Sources", CSV): UTF-8, a leading
 * byte-order mark ignored, comma-separated, RFC 4180 quoting (csv-parse, nothing relaxed; blank
 * lines between rows are skipped); header names trimmed, lower-cased, spaces as `_`. Each row
 * carries the line it starts on as a person sees it in the file (the header is line 1, a quoted
 * cell spanning lines counts each of them).
 */
import { parse } from "csv-parse/sync";
import { ImportFileError } from "../import-data.ts";
import type { ImportCollector } from "./collector.ts";
import { decodeText } from "./files.ts";

export interface CsvRow {
  /** The line the row starts on (header: line 1). */
  line: number;
  /** Cells by normalised column name, trimmed. */
  cells: Record<string, string>;
}

export interface CsvTable {
  columns: string[];
  rows: CsvRow[];
}

export function normaliseHeader(name: string): string {
  return name.trim().toLowerCase().replace(/\s+/g, "_");
}

/**
 * Parses `bytes` as `file`; throws ImportFileError when it is not CSV (with the line csv-parse
 * stopped at), has no header, or lacks a column of `required`. Data rows count as records.
 */
export function readCsvTable(bytes: Uint8Array, file: string, required: readonly string[], collector: ImportCollector): CsvTable {
  const source = decodeText(bytes, file);
  let parsed: Array<{ record: string[]; info: { lines: number; empty_lines: number } }>;
  try {
    parsed = parse(source, { bom: true, info: true, skip_empty_lines: true }) as unknown as typeof parsed;
  } catch (error) {
    const line = (error as { lines?: number }).lines;
    throw new ImportFileError(`${file}${line ? `:${line}` : ""}: not CSV (${(error as Error).message})`);
  }
  const header = parsed[0];
  if (header === undefined) throw new ImportFileError(`${file}: empty (no header line)`);
  const columns = header.record.map(normaliseHeader);
  for (const column of required) {
    if (!columns.includes(column)) throw new ImportFileError(`${file}: missing required column ${column}`);
  }
  collector.countRecords(file, parsed.length - 1);
  const rows: CsvRow[] = [];
  let previousEnd = header.info.lines;
  let previousEmpty = header.info.empty_lines;
  for (const { record, info } of parsed.slice(1)) {
    const line = previousEnd + 1 + (info.empty_lines - previousEmpty);
    previousEnd = info.lines;
    previousEmpty = info.empty_lines;
    const cells: Record<string, string> = {};
    columns.forEach((column, index) => {
      // A repeated column keeps its first non-empty cell.
      const value = (record[index] ?? "").trim();
      if (!(column in cells) || cells[column] === "") cells[column] = value;
    });
    rows.push({ line, cells });
  }
  return { columns, rows };
}
