/**
 * The order in which the pool hands out idle connections (patches/README.md, edit 6 to the
 * `postgres` driver): most recently used first, so below full load the same few backends serve
 * every query with warm caches and the rest stay idle until `idle_timeout` closes them. Longest
 * idle first, the driver's own order, sends each query to the next backend in turn. Postgres
 * only: PGlite has one connection.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type DatabaseHandle, type Db, openDatabase } from "../db/connect.ts";

const onPostgres = Boolean(process.env.DATABASE_URL);

describe.skipIf(!onPostgres)("the pool's idle connections", () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await openDatabase({ DATABASE_URL: inject("testDatabaseUrl") as string, poolSize: 4 });
  });
  afterAll(() => handle?.close());

  /** The backend that runs a statement on `db` (the pool, or a transaction), holding it `seconds`. */
  const backendOf = async (db: Db, seconds = 0) =>
    (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid, pg_sleep(${seconds})`.execute(db)).rows[0]!.pid;

  it("are handed out most recently used first: one query at a time stays on one backend", async () => {
    // Four at once open all four connections; each holds its connection until all four ran.
    const opened = await Promise.all(Array.from({ length: 4 }, () => backendOf(handle.db, 0.05)));
    expect(new Set(opened).size).toBe(4);
    const sequential: number[] = [];
    for (let i = 0; i < 8; i++) sequential.push(await backendOf(handle.db));
    expect(new Set(sequential).size).toBe(1);
    expect(opened).toContain(sequential[0]);
  });

  it("are handed out to transactions in the same order", async () => {
    const pids: number[] = [];
    for (let i = 0; i < 4; i++) {
      pids.push(await handle.db.transaction().execute((trx) => backendOf(trx)));
    }
    expect(new Set(pids).size).toBe(1);
  });
});
