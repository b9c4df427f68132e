/**
 * The lock that orders API writes against `import --replace` of the same project
 * (docs/contract/project-snapshot.md, "Restores": requests racing a replace wait for it or receive a
 * contract error; none gets a 500).
 *
 * A transaction-level advisory lock keyed by the project id: every write transaction takes it in
 * shared mode as its first statement, so writes never wait for each other on it; a replace takes
 * it in exclusive mode before it touches a row, so it waits for the writes under way to commit,
 * and the writes that arrive meanwhile queue behind it (Postgres grants a shared request after a
 * queued exclusive one). Both sides take this lock before any row lock, so it adds no deadlock.
 * A replace keeps the project's id and its voters' internal ids (snapshot-import.ts), so a write
 * that waited runs against the restored project with the ids it resolved before.
 */
import { type Kysely, type RawBuilder, sql, type Transaction } from "kysely";
import type { Database } from "../../../db/schema.ts";
import { ApiError } from "../http/errors.ts";
import { inTransaction, isTimeLimit, sqlStateOf } from "./transaction.ts";

/** First half of the advisory lock key ("fb" + 1): keeps these locks apart from any other use. */
export const LOCK_CLASS = 0x66620001;

/**
 * Runs `write` in one transaction that first takes project `projectId`'s write lock in shared
 * mode, and returns what it returned. Deadlock and serialization victims are retried
 * (inTransaction, src/lib/data/transaction.ts). A foreign-key violation (23503) means a row the
 * request resolved before it waited (a feature, comment or voter) is gone from the project a
 * replace restored: it answers 404 not_found instead of a 500. Other errors propagate. With
 * `firstStatementLocks`, `write`'s first statement takes the lock (sharedProjectWriteLock).
 */
export async function withProjectWriteLock<T>(
  db: Kysely<Database>,
  projectId: number,
  write: (trx: Transaction<Database>) => Promise<T>,
  options: { firstStatementLocks?: boolean } = {},
): Promise<T> {
  return waitingOutReplace(db, projectId, () =>
    answeringVanishedRows(() =>
      inTransaction(db, async (trx) => {
        // `firstStatementLocks`: the caller's first statement takes the lock itself
        // (sharedProjectWriteLock, below its row locks), saving a round trip; a first statement
        // that finds no row may not take it, so it must then write nothing.
        if (!options.firstStatementLocks) {
          await sql`SELECT pg_advisory_xact_lock_shared(${LOCK_CLASS}::int, ${projectId}::int)`.execute(trx);
        }
        return write(trx);
      }),
    ),
  );
}

/**
 * Runs `write` (a write of project `projectId` that takes its write lock in shared mode); when it
 * stops at a database time limit (isTimeLimit: lock or statement bound) while a replace of the
 * project holds or awaits the lock in exclusive mode, waits for the replace to end with no bound
 * and runs `write` once more. Requests racing a replace wait for it and never answer 500
 * (docs/contract/project-snapshot.md, "Restores"), however long it takes, while a write blocked by
 * anything
 * else (a stalled peer's row lock) still gives up at the bound. The check costs nothing until a
 * write has already waited the whole bound. Other errors, and a time limit with no replace under
 * way, propagate.
 */
export async function waitingOutReplace<T>(db: Kysely<Database>, projectId: number, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (!isTimeLimit(error) || !(await replaceUnderWay(db, projectId))) throw error;
  }
  await db.transaction().execute(async (trx) => {
    // Transaction-local: the connection goes back to the pool with its own bounds.
    await sql`SELECT set_config('lock_timeout', '0', true), set_config('statement_timeout', '0', true)`.execute(trx);
    await sql`SELECT pg_advisory_xact_lock_shared(${LOCK_CLASS}::int, ${projectId}::int)`.execute(trx);
  });
  return write();
}

/** Whether a session holds or awaits project `projectId`'s write lock in exclusive mode (a replace). */
async function replaceUnderWay(db: Kysely<Database>, projectId: number): Promise<boolean> {
  // A two-int4 advisory key shows as classid, objid and objsubid 2 in pg_locks.
  const { rows } = await sql<{ under_way: boolean }>`SELECT EXISTS (
      SELECT 1 FROM pg_locks
      WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND classid = ${LOCK_CLASS}::int::oid AND objid = ${projectId}::int::oid AND objsubid = 2 AND mode = 'ExclusiveLock'
    ) AS under_way`.execute(db);
  return rows[0]?.under_way === true;
}

/**
 * A condition that takes project `projectId`'s write lock in shared mode and is true: for a
 * single-statement write (a vote), put on the scan of the first row it reads, below its row
 * locks, so the lock is taken before any row lock and held to the end of the statement's implicit
 * transaction. A statement that waited for a replace this way reads the rows as they were before
 * it: their row locks then find them gone and the write changes nothing (the caller answers 404).
 */
export function sharedProjectWriteLock(projectId: unknown): RawBuilder<boolean> {
  return sql<boolean>`pg_advisory_xact_lock_shared(${LOCK_CLASS}::int, ${projectId}::int)::text IS NOT NULL`;
}

/**
 * Runs `write` (a transaction or a single-statement write under sharedProjectWriteLock); a
 * foreign-key violation (23503) means a row it resolved before it waited is gone from the project
 * a replace restored: 404 not_found instead of a 500.
 */
export async function answeringVanishedRows<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (sqlStateOf(error) === "23503") {
      throw new ApiError("not_found", "what this request refers to was removed while it ran (the project was restored); read it again");
    }
    throw error;
  }
}

/**
 * Takes project `projectId`'s write lock in exclusive mode for the rest of transaction `trx`:
 * returns once every write transaction of the project under way has ended; writes that start
 * later wait until `trx` ends. For the snapshot import's replace; call it before touching a row.
 */
export async function lockProjectForReplace(trx: Transaction<Database>, projectId: number): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${LOCK_CLASS}::int, ${projectId}::int)`.execute(trx);
}
