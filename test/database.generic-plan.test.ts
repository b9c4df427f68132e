/**
 * Statements marked for a generic plan (db/prepared-statement-client.ts GENERIC_PLAN_COMMENT) on
 * a real Postgres: sent alone they run on a connection of the generic-plan pool, which started
 * in `plan_cache_mode = force_generic_plan` with the same session bounds as the main pool; inside
 * a transaction they run on its connection with the mode set for them alone; every other
 * statement keeps Postgres's own choice (`auto`). Postgres only: PGlite ignores the mark.
 */
import { type CompiledQuery, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type DatabaseHandle, openDatabase } from "../db/connect.ts";
import { GENERIC_PLAN_COMMENT } from "../db/prepared-statement-client.ts";

const onPostgres = Boolean(process.env.DATABASE_URL);

/** The session's plan mode and statement bound, as a statement marked for a generic plan. */
const markedSettings: CompiledQuery<Settings> = {
  sql: `${GENERIC_PLAN_COMMENT}select current_setting('plan_cache_mode') as mode, current_setting('statement_timeout') as bound`,
  parameters: [],
  query: { kind: "RawNode" } as never,
  queryId: { queryId: "generic-plan-settings" },
};
const settings = sql<Settings>`select current_setting('plan_cache_mode') as mode, current_setting('statement_timeout') as bound`;
interface Settings {
  mode: string;
  bound: string;
}

describe.skipIf(!onPostgres)("statements marked for a generic plan", () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await openDatabase({
      DATABASE_URL: inject("testDatabaseUrl") as string,
      poolSize: 2,
      limits: { statementTimeoutMs: 7000 },
    });
  });
  afterAll(() => handle?.close());

  it("run alone with a generic plan and the session bounds; other statements keep Postgres's choice", async () => {
    const [marked, plain] = await Promise.all([handle.db.executeQuery(markedSettings), settings.execute(handle.db)]);
    expect(marked.rows).toEqual([{ mode: "force_generic_plan", bound: "7s" }]);
    expect(plain.rows).toEqual([{ mode: "auto", bound: "7s" }]);
  });

  it("run inside a transaction with a generic plan, and leave the transaction's next statement in auto", async () => {
    const seen = await handle.db.transaction().execute(async (trx) => {
      const marked = await trx.executeQuery(markedSettings);
      const after = await settings.execute(trx);
      return [marked.rows[0], after.rows[0]];
    });
    expect(seen).toEqual([
      { mode: "force_generic_plan", bound: "7s" },
      { mode: "auto", bound: "7s" },
    ]);
  });

  it("many at once, beside plain statements, each in its own mode", async () => {
    const runs = await Promise.all(
      Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? handle.db.executeQuery(markedSettings) : settings.execute(handle.db))),
    );
    expect(runs.map((run, i) => [i % 2 === 0, run.rows[0]!.mode])).toEqual(
      runs.map((_, i) => [i % 2 === 0, i % 2 === 0 ? "force_generic_plan" : "auto"]),
    );
  });
});
