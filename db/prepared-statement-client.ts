/**
 * A library internal the database layer relies on: kysely-postgres-js calls only `reserve()`
 * (then `unsafe(sql, params)` and `release()` on the reserved connection) and `end()` on the
 * client it is given. kysely-postgres-js does not promise it; prepared-statement-client.test.ts
 * fails when an upgrade changes it.
 */
import type { Sql } from "postgres";

/**
 * A statement whose text starts with this comment runs with a generic plan on Postgres
 * (`plan_cache_mode = force_generic_plan` around it), whatever Postgres's own choice would be:
 * db/query-template.ts marks the shapes that measured cheaper so. PGlite ignores the comment.
 */
export const GENERIC_PLAN_COMMENT = "/* generic plan */ ";

/**
 * The client as kysely-postgres-js sees it, with every query sent as a named prepared statement.
 * The dialect runs queries through `unsafe()`, which postgres-js leaves unprepared; an unprepared
 * query with parameters costs two round trips (Parse/Describe, wait for the parameter types, then
 * Bind/Execute) and a fresh parse and plan each time. Prepared, a statement seen before on that
 * connection is one Bind/Execute round trip and Postgres may reuse its plan. Calling the client
 * as a tagged template throws: queries go through kysely.
 */
export function preparedStatementClient(client: Sql): Sql {
  return Object.assign(
    () => {
      throw new Error("query through kysely");
    },
    {
      reserve: async () => {
        const connection = await client.reserve();
        return {
          unsafe: (query: string, parameters: unknown[] = []) => {
            if (!query.startsWith(GENERIC_PLAN_COMMENT)) return connection.unsafe(query, parameters as never[], { prepare: true });
            // plan_cache_mode is read each time a prepared statement is bound: set for this one
            // statement and reset after it, the three sent together (one round trip). A failed
            // SET or RESET changes nothing the statement's own answer depends on.
            connection.unsafe(`SET plan_cache_mode = force_generic_plan`).catch(() => {});
            const run = connection.unsafe(query, parameters as never[], { prepare: true }).execute();
            connection.unsafe(`RESET plan_cache_mode`).catch(() => {});
            return run;
          },
          release: () => connection.release(),
        };
      },
      end: () => client.end(),
    },
  ) as unknown as Sql;
}
