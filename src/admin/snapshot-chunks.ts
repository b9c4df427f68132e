/**
 * Bulk-write helpers of the snapshot import: every statement is cut into chunks that stay well
 * under Postgres's 65,535 bind parameters, whatever the size of the project.
 */
import { sql, type Transaction } from "kysely";
import type { Database } from "../../db/schema.ts";

/** The import's one transaction. */
export type Trx = Transaction<Database>;

/**
 * Told how far the import is: after each chunk of a table, `step` is the table, `done` the rows
 * of it written so far and `total` its rows in the file; for a step without rows (deleting the
 * old project, computing counters) `done` is 0 and `total` 1 when it starts.
 */
export type ProgressSink = (step: string, done: number, total: number) => void;

/** `rows` in slices of at most `size` (the last one shorter), in order. */
export function chunks<T>(rows: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/**
 * Runs `insert` over slices of `rows` sized to stay well under Postgres's 65,535 bind
 * parameters per statement (30,000 / columns rows, at most 5,000), and concatenates what each
 * slice returned (in insertion order).
 */
export async function insertInChunks<Row extends object, Out>(
  rows: Row[],
  insert: (chunk: Row[]) => Promise<Out[]>,
  onChunk: (done: number) => void = () => {},
): Promise<Out[]> {
  if (rows.length === 0) return [];
  // Rows may differ in their keys (an optional id); count the widest.
  const columns = Math.max(...rows.slice(0, 100).map((row) => Object.keys(row).length)) + 1;
  const size = Math.max(1, Math.min(5_000, Math.floor(30_000 / columns)));
  const out: Out[] = [];
  for (const chunk of chunks(rows, size)) {
    const returned = await insert(chunk);
    for (const row of returned) out.push(row);
    onChunk(out.length);
  }
  return out;
}

/**
 * Inserts one row per item (`toRow`, in chunks through `insert`, which returns the new row's id
 * columns) and maps each item's ref to what came back for its row. Throws when the insert did not
 * give back one row per item (named by `table` in the message).
 */
export async function insertByRef<Item extends { ref: string }, Row extends object, Out>(
  table: string,
  items: Item[],
  toRow: (item: Item, index: number) => Row,
  insert: (chunk: Row[]) => Promise<Out[]>,
  progress: ProgressSink = () => {},
): Promise<Map<string, Out>> {
  const refs = items.map((item) => item.ref);
  const returned = await insertInChunks(
    items.map((item, index) => toRow(item, index)),
    insert,
    (done) => progress(table, done, items.length),
  );
  if (refs.length !== returned.length) {
    throw new Error(`import: ${table} returned ${returned.length} ids for ${refs.length} rows`);
  }
  return new Map(refs.map((ref, i) => [ref, returned[i]!]));
}

/**
 * Inserts rows without returning anything, one array parameter per column expanded by
 * unnest(): for the big link tables (votes, likes) this is about twice as fast as multi-row
 * VALUES, and a chunk of 20,000 rows still binds only a handful of parameters.
 */
export async function insertUnnest<Row extends Record<string, unknown>>(
  trx: Trx,
  table: keyof Database,
  types: { [K in keyof Row]: "int" | "text" | "bool" | "timestamptz" },
  rows: Row[],
  progress: ProgressSink = () => {},
) {
  const names = Object.keys(types) as Array<keyof Row & string>;
  let done = 0;
  for (const chunk of chunks(rows, 20_000)) {
    const arrays = names.map((name) => sql`${chunk.map((row) => row[name])}::${sql.raw(types[name])}[]`);
    await sql`INSERT INTO ${sql.table(table)} (${sql.join(names.map((name) => sql.ref(name)))})
      SELECT * FROM unnest(${sql.join(arrays)})`.execute(trx);
    done += chunk.length;
    progress(table, done, rows.length);
  }
}

/** The value stored for `ref`; throws when there is none. */
export function need<T>(map: Map<string, T>, ref: string): T {
  const value = map.get(ref);
  // Validation resolved every ref already; reaching this is a bug in the importer.
  if (value === undefined) throw new Error(`import: unresolved ref "${ref}"`);
  return value;
}
