/**
 * preparedStatementClient against the installed kysely-postgres-js (recording fake clients): a
 * statement marked for a generic plan sent alone runs on the generic-plan pool as it is, and
 * inside a transaction (or without that pool) between its SET and RESET of plan_cache_mode; a
 * statement marked with the lock bound after SET LOCAL statement_timeout, with no query after it.
 * test/database.generic-plan.test.ts checks the plan mode each one gets from Postgres itself.
 */
import { Kysely, sql } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import type { Sql } from "postgres";
import { describe, expect, it } from "vitest";
import { GENERIC_PLAN_COMMENT, LOCK_BOUND_COMMENT, preparedStatementClient } from "./prepared-statement-client.ts";

describe("kysely-postgres-js", () => {
  it("reaches the client only through reserve(), unsafe() on the connection, release() and end()", async () => {
    const calls: string[] = [];
    const client = {
      reserve: async () => ({
        unsafe: (query: string, parameters: unknown[], options: { prepare?: boolean }) => {
          calls.push(`unsafe:${options?.prepare}:${query}:${JSON.stringify(parameters)}`);
          return Promise.resolve(Object.assign([{ one: 1 }], { count: 1, command: "SELECT" }));
        },
        release: () => calls.push("release"),
      }),
      end: async () => {
        calls.push("end");
      },
    } as unknown as Sql;
    const db = new Kysely<Record<string, never>>({ dialect: new PostgresJSDialect({ postgres: preparedStatementClient(client) }) });
    const { rows } = await sql<{ one: number }>`select ${1}::int as one`.execute(db);
    await db.destroy();
    expect(rows).toEqual([{ one: 1 }]);
    expect(calls).toEqual(["unsafe:true:select $1::int as one:[1]", "release", "end"]);
  });

  it("sends a marked statement between SET and RESET of plan_cache_mode when there is no generic-plan pool", async () => {
    const sent: string[] = [];
    const db = new Kysely<Record<string, never>>({
      dialect: new PostgresJSDialect({ postgres: preparedStatementClient(recordingClient("main", sent)) }),
    });
    const { rows } = await db.executeQuery<{ one: number }>(marked("select 1 as one"));
    await db.destroy();
    expect(rows).toEqual([{ one: 1 }]);
    expect(sent).toEqual([
      "main: SET plan_cache_mode = force_generic_plan",
      `main: ${GENERIC_PLAN_COMMENT}select 1 as one (prepared)`,
      "main: RESET plan_cache_mode",
      "main: release",
      "main: end",
    ]);
  });

  it("runs a marked statement sent alone on the generic-plan pool as it is, other statements on the main pool", async () => {
    const sent: string[] = [];
    const client = preparedStatementClient(recordingClient("main", sent), recordingClient("generic", sent));
    const db = new Kysely<Record<string, never>>({ dialect: new PostgresJSDialect({ postgres: client }) });
    await db.executeQuery(marked("select 1 as one"));
    await sql`select 2 as two`.execute(db);
    await db.destroy();
    expect(sent).toEqual([
      `generic: ${GENERIC_PLAN_COMMENT}select 1 as one (prepared)`,
      "generic: release",
      "main: select 2 as two (prepared)",
      "main: release",
      "main: end",
      "generic: end",
    ]);
  });

  it("keeps a transaction on one connection of the main pool, a marked statement inside it between SET and RESET", async () => {
    const sent: string[] = [];
    const client = preparedStatementClient(recordingClient("main", sent), recordingClient("generic", sent));
    const db = new Kysely<Record<string, never>>({ dialect: new PostgresJSDialect({ postgres: client }) });
    await db.transaction().execute((trx) => trx.executeQuery(marked("select 1 as one")));
    await db.destroy();
    expect(sent).toEqual([
      "main: begin (prepared)",
      "main: SET plan_cache_mode = force_generic_plan",
      `main: ${GENERIC_PLAN_COMMENT}select 1 as one (prepared)`,
      "main: RESET plan_cache_mode",
      "main: commit (prepared)",
      "main: release",
      "main: end",
      "generic: end",
    ]);
  });
});

describe("a statement marked with the lock bound", () => {
  it("is sent after SET LOCAL statement_timeout in the same round trip, with no query after it", async () => {
    const sent: string[] = [];
    const client = preparedStatementClient(recordingClient("main", sent), recordingClient("generic", sent), { lockBoundMs: 5000 });
    const db = new Kysely<Record<string, never>>({ dialect: new PostgresJSDialect({ postgres: client }) });
    await db.transaction().execute(async (trx) => {
      await trx.executeQuery(lockBound("select 1 as one"));
      await sql`select 2 as two`.execute(trx);
    });
    await db.destroy();
    expect(sent).toEqual([
      "main: begin (prepared)",
      "main: SET LOCAL statement_timeout = 5000",
      `main: ${LOCK_BOUND_COMMENT}select 1 as one (prepared)`,
      "main: select 2 as two (prepared)",
      "main: commit (prepared)",
      "main: release",
      "main: end",
      "generic: end",
    ]);
  });

  it("also marked for a generic plan, gets both settings before it and the plan mode's RESET after it", async () => {
    const sent: string[] = [];
    const db = new Kysely<Record<string, never>>({
      dialect: new PostgresJSDialect({ postgres: preparedStatementClient(recordingClient("main", sent), undefined, { lockBoundMs: 700 }) }),
    });
    await db.transaction().execute((trx) => trx.executeQuery(marked(`${LOCK_BOUND_COMMENT}select 1 as one`)));
    await db.destroy();
    expect(sent).toEqual([
      "main: begin (prepared)",
      "main: SET plan_cache_mode = force_generic_plan; SET LOCAL statement_timeout = 700",
      `main: ${GENERIC_PLAN_COMMENT}${LOCK_BOUND_COMMENT}select 1 as one (prepared)`,
      "main: RESET plan_cache_mode",
      "main: commit (prepared)",
      "main: release",
      "main: end",
    ]);
  });

  it("is sent as it is when there is no lock bound", async () => {
    const sent: string[] = [];
    const db = new Kysely<Record<string, never>>({
      dialect: new PostgresJSDialect({ postgres: preparedStatementClient(recordingClient("main", sent)) }),
    });
    await db.transaction().execute((trx) => trx.executeQuery(lockBound("select 1 as one")));
    await db.destroy();
    expect(sent).toEqual([
      "main: begin (prepared)",
      `main: ${LOCK_BOUND_COMMENT}select 1 as one (prepared)`,
      "main: commit (prepared)",
      "main: release",
      "main: end",
    ]);
  });
});

/** A compiled query marked with the lock bound. */
function lockBound(text: string) {
  return { sql: `${LOCK_BOUND_COMMENT}${text}`, parameters: [], query: { kind: "RawNode" } as never, queryId: { queryId: "q" } };
}

/** A compiled query marked for a generic plan. */
function marked(text: string) {
  return { sql: `${GENERIC_PLAN_COMMENT}${text}`, parameters: [], query: { kind: "RawNode" } as never, queryId: { queryId: "q" } };
}

/**
 * A fake postgres-js client named `name` whose reserved connections record, in `sent`, each
 * query when it is sent (postgres-js sends a query when first executed: execute(), catch(), or
 * awaited, in that order), and each release and end.
 */
function recordingClient(name: string, sent: string[]): Sql {
  const result = Object.assign([{ one: 1 }], { count: 1, command: "SELECT" });
  const query = (text: string) => {
    let started = false;
    const start = () => {
      if (!started) sent.push(`${name}: ${text}`);
      started = true;
    };
    const promise = Promise.resolve(result);
    return Object.assign(promise, {
      execute() {
        start();
        return promise;
      },
      catch(reject: (error: unknown) => unknown) {
        start();
        return Promise.prototype.catch.call(promise, reject);
      },
      // biome-ignore lint/suspicious/noThenProperty: a postgres-js query is sent when awaited, as this one.
      then(resolve: (value: unknown) => unknown, reject?: (error: unknown) => unknown) {
        start();
        return Promise.prototype.then.call(promise, resolve, reject);
      },
    });
  };
  return {
    reserve: async () => ({
      unsafe: (text: string, _parameters?: unknown[], options?: { prepare?: boolean }) =>
        query(`${text}${options?.prepare ? " (prepared)" : ""}`),
      release: () => sent.push(`${name}: release`),
    }),
    end: async () => {
      sent.push(`${name}: end`);
    },
  } as unknown as Sql;
}
