/** Waiting for a request to queue behind a row lock that a test's own session holds. */
import type postgres from "postgres";

/**
 * Resolves once a session of `session`'s database whose statement starts with `statementStart`
 * (as pg_stat_activity shows it) waits for another transaction (a row lock: Postgres has it wait
 * on the holder's transaction id); throws after 5 s.
 */
export async function waitForLockWaiter(session: postgres.ReservedSql, statementStart: string, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    // pg_locks shows the current state, also to a session inside a transaction.
    const [row] = await session`
      SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE NOT l.granted AND l.locktype = 'transactionid' AND a.datname = current_database()
        AND starts_with(a.query, ${statementStart})`;
    if (row!.n > 0) return;
    if (Date.now() > deadline) throw new Error(`${what} never waited for the row lock`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
