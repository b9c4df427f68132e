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
 * A statement inside a transaction whose text starts with this comment (after
 * GENERIC_PLAN_COMMENT, when both) runs, with the rest of its transaction, under the lock bound
 * as statement bound: for the statement that takes a contended row lock, so that it gives up
 * within the lock bound in all. Postgres applies lock_timeout to each lock a statement waits
 * for, and a row lock can take two waits: for the row's place in the queue (held by an earlier
 * waiter) and then for the holder's transaction, so a write queued behind another waiter of a
 * frozen holder would wait up to twice the lock bound (docs/operations.md, "Database time
 * limits"). Sent alone (no transaction), the mark changes nothing. PGlite ignores the comment.
 */
export const LOCK_BOUND_COMMENT = "/* lock bound */ ";

/** Options of preparedStatementClient. */
export interface PreparedStatementOptions {
  /**
   * The statement bound, in milliseconds, of statements marked with LOCK_BOUND_COMMENT: the
   * connections' lock_timeout. Unset or 0 (no lock bound): they run with the connection's own.
   */
  lockBoundMs?: number;
}

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
 *
 * Statements marked with LOCK_BOUND_COMMENT are sent after `SET LOCAL statement_timeout =
 * <options.lockBoundMs>`, in the same round trip, with no query after them: the setting ends with
 * the transaction, committed or rolled back. (A query pipelined after a statement that fails
 * would be in flight when Postgres ends the session, e.g. at the idle bound while the process is
 * stopped; postgres-js then never settles the transaction's ROLLBACK queued behind it.)
 */
export function preparedStatementClient(client: Sql, genericPlanClient?: Sql, options: PreparedStatementOptions = {}): Sql {
  const lockBoundMs = Math.trunc(options.lockBoundMs ?? 0);
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
            const generic = query.startsWith(GENERIC_PLAN_COMMENT);
            const resets = generic && !onGenericPool ? ["plan_cache_mode"] : [];
            const sets = resets.map((name) => `SET ${name} = force_generic_plan`);
            if (lockBoundMs > 0 && query.startsWith(LOCK_BOUND_COMMENT, generic ? GENERIC_PLAN_COMMENT.length : 0)) {
              sets.push(`SET LOCAL statement_timeout = ${lockBoundMs}`);
            }
            if (sets.length === 0) return connection.unsafe(query, parameters as never[], { prepare: true });
            // plan_cache_mode is read each time a prepared statement is bound, statement_timeout
            // each time a statement starts: set before this statement in the same round trip
            // (plan_cache_mode reset after it). A failed SET or RESET changes nothing the
            // statement's own answer depends on.
            connection.unsafe(sets.join("; ")).catch(() => {});
            const run = connection.unsafe(query, parameters as never[], { prepare: true }).execute();
            if (resets.length > 0) connection.unsafe(resets.map((name) => `RESET ${name}`).join("; ")).catch(() => {});
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
