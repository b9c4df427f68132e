/** preparedStatementClient against the installed kysely-postgres-js (a recording fake client). */
import { Kysely, sql } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import type { Sql } from "postgres";
import { describe, expect, it } from "vitest";
import { preparedStatementClient } from "./prepared-statement-client.ts";

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
});
