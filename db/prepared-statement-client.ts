/**
 * A library internal the database layer relies on: kysely-postgres-js calls only `reserve()`
 * (then `unsafe(sql, params)` and `release()` on the reserved connection) and `end()` on the
 * client it is given. kysely-postgres-js does not promise it; prepared-statement-client.test.ts
 * fails when an upgrade changes it.
 */
import type { ReservedSql, Sql } from "postgres";

/**
 * A statement whose text starts with this comment runs with a generic plan on Postgres,
 * whatever Postgres's own choice would be: db/query-template.ts marks the shapes that measured
 * cheaper so. PGlite ignores the comment.
 */
export const GENERIC_PLAN_COMMENT = "/* generic plan */ ";

/** The start-up parameter of the connections of `genericPlanClient` (preparedStatementClient). */
export const GENERIC_PLAN_PARAMETERS = { plan_cache_mode: "force_generic_plan" } as const;

/**
 * The client as kysely-postgres-js sees it, with every query sent as a named prepared statement.
 * The dialect runs queries through `unsafe()`, which postgres-js leaves unprepared; an unprepared
 * query with parameters costs two round trips (Parse/Describe, wait for the parameter types, then
 * Bind/Execute) and a fresh parse and plan each time. Prepared, a statement seen before on that
 * connection is one Bind/Execute round trip and Postgres may reuse its plan. Calling the client
 * as a tagged template throws: queries go through kysely.
 *
 * Statements marked with GENERIC_PLAN_COMMENT: kysely reserves a connection for each query, or
 * for each transaction, and the first statement sent on it picks the pool. A marked statement
 * sent alone runs on `genericPlanClient`, whose connections start with GENERIC_PLAN_PARAMETERS,
 * so it costs no statement more. Inside a transaction (its first statement, BEGIN, took a
 * connection of `client`), or without a generic-plan pool, it is sent between `SET
 * plan_cache_mode = force_generic_plan` and `RESET plan_cache_mode`, the three together in one
 * round trip (docs/benchmarks.md, "What was tried": generic plans on their own connections).
 */
export function preparedStatementClient(client: Sql, genericPlanClient?: Sql): Sql {
  return Object.assign(
    () => {
      throw new Error("query through kysely");
    },
    {
      reserve: async () => {
        let reserved: Promise<ReservedSql> | undefined;
        let onGenericPool = false;
        const connectionFor = (query: string): Promise<ReservedSql> => {
          if (!reserved) {
            onGenericPool = genericPlanClient !== undefined && query.startsWith(GENERIC_PLAN_COMMENT);
            reserved = (onGenericPool ? genericPlanClient! : client).reserve();
          }
          return reserved;
        };
        return {
          unsafe: async (query: string, parameters: unknown[] = []) => {
            const connection = await connectionFor(query);
            if (onGenericPool || !query.startsWith(GENERIC_PLAN_COMMENT)) {
              return connection.unsafe(query, parameters as never[], { prepare: true });
            }
            // plan_cache_mode is read each time a prepared statement is bound: set for this one
            // statement and reset after it. A failed SET or RESET changes nothing the
            // statement's own answer depends on.
            connection.unsafe(`SET plan_cache_mode = force_generic_plan`).catch(() => {});
            const run = connection.unsafe(query, parameters as never[], { prepare: true }).execute();
            connection.unsafe(`RESET plan_cache_mode`).catch(() => {});
            return run;
          },
          release: () => {
            // A connection that could not be reserved has nothing to give back.
            reserved?.then(
              (connection) => connection.release(),
              () => {},
            );
          },
        };
      },
      end: async () => {
        await Promise.all([client.end(), genericPlanClient?.end()]);
      },
    },
  ) as unknown as Sql;
}
