/**
 * Bulk loading helpers for the bench generator: COPY ... FROM STDIN in Postgres text format
 * through the `postgres` driver, with a progress bar (rows, rate) on stderr.
 */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Sql, TransactionSql } from "postgres";

export type Cell = string | number | boolean | null | Date;

/** One COPY text-format field: NULL is \N; backslash, tab and line breaks are escaped. */
function field(value: Cell): string {
  if (value === null) return "\\N";
  if (value instanceof Date) return value.toISOString();
  if (typeof value !== "string") return String(value);
  return value.replace(/[\\\t\n\r]/g, (ch) => (ch === "\\" ? "\\\\" : ch === "\t" ? "\\t" : ch === "\n" ? "\\n" : "\\r"));
}

/** A progress line on stderr, redrawn at most every 100 ms: bar, count, rate in rows/s. */
export class Progress {
  private done = 0;
  private lastDraw = 0;
  private readonly started = performance.now();

  constructor(
    private readonly label: string,
    private readonly total: number,
  ) {}

  add(rows: number): void {
    this.done += rows;
    const now = performance.now();
    if (now - this.lastDraw >= 100 || this.done >= this.total) {
      this.lastDraw = now;
      this.draw(now);
    }
  }

  private draw(now: number): void {
    if (!process.stderr.isTTY && this.done < this.total) return;
    const share = this.total === 0 ? 1 : Math.min(1, this.done / this.total);
    const width = 24;
    const filled = Math.round(share * width);
    const seconds = (now - this.started) / 1000;
    const rate = seconds > 0 ? Math.round(this.done / seconds) : 0;
    const line =
      `  ${this.label.padEnd(14)} [${"#".repeat(filled)}${".".repeat(width - filled)}] ` +
      `${this.done.toLocaleString("en-US")}/${this.total.toLocaleString("en-US")} ` +
      `${rate.toLocaleString("en-US")} rows/s ${seconds.toFixed(1)} s`;
    process.stderr.write(process.stderr.isTTY ? `\r${line}\x1b[K` : `${line}\n`);
  }

  /** Ends the line (the last draw already showed 100 %). */
  finish(): void {
    if (this.done < this.total) this.draw(performance.now());
    if (process.stderr.isTTY) process.stderr.write("\n");
  }
}

/**
 * COPY `rows` into `table (columns)`; rows are produced lazily and sent in ~256 KB chunks so a
 * million rows never sit in memory as one string. Returns the number of rows written.
 */
export async function copyRows(
  sql: Sql | TransactionSql,
  table: string,
  columns: readonly string[],
  total: number,
  rows: Iterable<Cell[]>,
): Promise<number> {
  const progress = new Progress(table, total);
  const writable = await sql.unsafe(`COPY ${table} (${columns.join(", ")}) FROM STDIN`).writable();
  let count = 0;
  function* chunks(): Generator<string> {
    let buffer = "";
    let inBuffer = 0;
    for (const row of rows) {
      buffer += `${row.map(field).join("\t")}\n`;
      inBuffer++;
      if (buffer.length >= 256 * 1024) {
        count += inBuffer;
        progress.add(inBuffer);
        inBuffer = 0;
        yield buffer;
        buffer = "";
      }
    }
    count += inBuffer;
    progress.add(inBuffer);
    if (buffer !== "") yield buffer;
  }
  await pipeline(Readable.from(chunks()), writable);
  progress.finish();
  return count;
}

/** Reserves `n` consecutive ids from a serial column's sequence; returns the first one. */
export async function reserveIds(sql: Sql | TransactionSql, table: string, n: number): Promise<number> {
  const [row] = await sql<{ first: string }[]>`
    SELECT setval(pg_get_serial_sequence(${table}, 'id'), nextval(pg_get_serial_sequence(${table}, 'id')) + ${n} - 1) - ${n} + 1 AS first`;
  return Number(row!.first);
}
