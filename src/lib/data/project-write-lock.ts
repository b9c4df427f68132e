/**
 * The lock that orders API writes against `import --replace` of the same project
 * (spec/project-snapshot.md, "Restores": requests racing a replace wait for it or receive a
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
import { inTransaction, sqlStateOf } from "./transaction.ts";

/** First half of the advisory lock key ("fb" + 1): keeps these locks apart from any other use. */
const LOCK_CLASS = 0x66620001;

/**
 * Runs `write` in one transaction that first takes project `projectId`'s write lock in shared
 * mode, and returns what it returned. Deadlock and serialization victims are retried
 * (inTransaction, src/lib/data/transaction.ts). A foreign-key violation (23503) means a row the
 * request resolved before it waited (a feature, comment or voter) is gone from the project a
 * replace restored: it answers 404 not_found instead of a 500. Other errors propagate.
 */
export async function withProjectWriteLock<T>(
  db: Kysely<Database>,
  projectId: number,
  write: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  return answeringVanishedRows(() =>
    inTransaction(db, async (trx) => {
      await sql`SELECT pg_advisory_xact_lock_shared(${LOCK_CLASS}::int, ${projectId}::int)`.execute(trx);
      return write(trx);
    }),
  );
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
