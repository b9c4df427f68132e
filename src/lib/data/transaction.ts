/**
 * Writes run in one transaction each (so that a later outbox append joins it). A
 * deadlock (40P01) or serialization failure (40001) rolls the whole transaction back with nothing
 * changed, so it is retried a few times rather than surfacing as a 500: lock ordering makes them
 * rare (features by id, then voters by id, then voter-count shards), but a cascade (ON DELETE SET
 * NULL on linked features) or another area's writes (a voter's tier change updates revenue
 * aggregates of every feature it voted on) can still meet one.
 */
import type { Kysely, Transaction } from "kysely";
import type { Database } from "../../../db/schema.ts";

const RETRYABLE = new Set(["40P01", "40001"]);
const ATTEMPTS = 5;

/** SQLSTATE of an error from postgres-js or PGlite, if it has one. */
export function sqlStateOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Whether `error` is a Postgres deadlock or serialization failure (SQLSTATE 40P01 / 40001). */
export function isRetryableConflict(error: unknown): boolean {
  const code = sqlStateOf(error);
  return code !== undefined && RETRYABLE.has(code);
}

/**
 * SQLSTATEs of the session time limits (db/connect.ts SessionLimits): 55P03 lock_not_available
 * (lock_timeout), 57014 query_canceled (statement_timeout), 25P03
 * idle_in_transaction_session_timeout. Postgres rolled the transaction back: nothing was written.
 */
const TIME_LIMITS = new Set(["55P03", "57014", "25P03"]);

/**
 * Whether `error` is Postgres giving up on a statement at a session time limit (a lock held too
 * long by another session, a statement running too long, this session idle in a transaction).
 * Not retried here: a retry would wait as long again behind the same holder.
 */
export function isTimeLimit(error: unknown): boolean {
  const code = sqlStateOf(error);
  return code !== undefined && TIME_LIMITS.has(code);
}

/**
 * Runs `work` (one transaction or one single-statement write) again, up to 5 attempts with a
 * short random pause, when Postgres aborts it as a deadlock victim or for a serialization
 * failure; nothing was changed by an aborted attempt. Any other error propagates at once.
 */
export async function retryingConflicts<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= ATTEMPTS || !isRetryableConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
    }
  }
}

/**
 * Runs `work` in a transaction, again when Postgres aborts it as a deadlock victim or for a
 * serialization failure (retryingConflicts). Any other error, ApiError included, rolls back and
 * propagates at once.
 */
export async function inTransaction<T>(db: Kysely<Database>, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return retryingConflicts(() => db.transaction().execute(work));
}
