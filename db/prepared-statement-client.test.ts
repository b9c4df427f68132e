/**
 * preparedStatementClient against the installed kysely-postgres-js (a recording fake client),
 * and a statement marked for a generic plan sent between its SET and RESET of plan_cache_mode.
 */
import { Kysely, sql } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import type { Sql } from "postgres";
import { describe, expect, it } from "vitest";
import { GENERIC_PLAN_COMMENT, preparedStatementClient } from "./prepared-statement-client.ts";

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

  it("sends a statement marked for a generic plan between SET and RESET of plan_cache_mode, in that order", async () => {
    const sent: string[] = [];
    const result = Object.assign([{ one: 1 }], { count: 1, command: "SELECT" });
    // postgres-js queries are sent when first executed (execute(), catch(), or awaited), in that order.
    const query = (text: string, value: unknown) => {
      let started = false;
      const start = () => {
        if (!started) sent.push(text);
        started = true;
      };
      const promise = Promise.resolve(value);
      return Object.assign(promise, {
        execute() {
          start();
          return promise;
        },
        catch(reject: (error: unknown) => unknown) {
          start();
          return Promise.prototype.catch.call(promise, reject);
        },
      });
    };
    const client = {
      reserve: async () => ({
        unsafe: (text: string, _parameters?: unknown[], options?: { prepare?: boolean }) =>
          query(`${text}${options?.prepare ? " (prepared)" : ""}`, result),
        release: () => {},
      }),
      end: async () => {},
    } as unknown as Sql;
    const db = new Kysely<Record<string, never>>({ dialect: new PostgresJSDialect({ postgres: preparedStatementClient(client) }) });
    const { rows } = await db.executeQuery<{ one: number }>({
      sql: `${GENERIC_PLAN_COMMENT}select 1 as one`,
      parameters: [],
      query: { kind: "RawNode" } as never,
      queryId: { queryId: "q" },
    });
    await db.destroy();
    expect(rows).toEqual([{ one: 1 }]);
    expect(sent).toEqual([
      "SET plan_cache_mode = force_generic_plan",
      `${GENERIC_PLAN_COMMENT}select 1 as one (prepared)`,
      "RESET plan_cache_mode",
    ]);
  });
});
