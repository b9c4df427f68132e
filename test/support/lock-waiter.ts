/** A test's own Postgres session holding a row lock, and waiting for a request to queue behind it. */
import postgres from "postgres";
import { inject } from "vitest";

/**
 * Runs `run` on a session of its own to the test database (standing for another request or
 * instance), then rolls back whatever it left open and closes it, also when `run` throws.
 */
export async function inOtherSession(run: (session: postgres.ReservedSql) => Promise<void>): Promise<void> {
  const client = postgres(inject("testDatabaseUrl") as string, { max: 1, onnotice: () => {} });
  const session = await client.reserve();
  try {
    await run(session);
  } finally {
    await session`ROLLBACK`.catch(() => {});
    session.release();
    await client.end({ timeout: 1 });
  }
}

/**
 * Resolves once a session of `session`'s database whose statement starts with `statementStart`
 * (as pg_stat_activity shows it) waits for another transaction (a row lock: Postgres has it wait
 * on the holder's transaction id); throws after 5 s.
 */
export async function waitForLockWaiter(session: postgres.ReservedSql, statementStart: string, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    // pg_locks shows the current state, but inside a transaction pg_stat_activity is a snapshot
    // taken at its first read: without a fresh one, a statement that started after the first
    // poll would keep the text its connection ran before, and never match.
    await session`SELECT pg_stat_clear_snapshot()`;
    const [row] = await session`
      SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE NOT l.granted AND l.locktype = 'transactionid' AND a.datname = current_database()
        AND starts_with(a.query, ${statementStart})`;
    if (row!.n > 0) return;
    if (Date.now() > deadline) throw new Error(`${what} never waited for the row lock`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
