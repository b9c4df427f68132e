/**
 * A frozen peer holding a feature's row lock (docs/operations.md, "Database time limits"): two
 * server processes on one Postgres and one Redis with the given time limits, instance A (the
 * `frozen` one) naming its sessions by `appName` so that its transactions can be told from B's
 * (`stack.server`). Shared by the fault tests that SIGSTOP A mid-transaction and measure what
 * B's writes of the same feature answer.
 */
import { sql } from "kysely";
import { TIME_LIMIT_MESSAGE } from "../../../src/app.ts";
import { type HttpResult, json } from "./http.ts";
import { signalGroup, sleep } from "./processes.ts";
import { importVotingProject } from "./seed.ts";
import { type ServerInstance, startServer } from "./server.ts";
import { type Stack, startStack } from "./stack.ts";
import type { WorkloadProject } from "./workload.ts";

/** The database time limits in milliseconds (DATABASE_*_TIMEOUT_MS, docs/operations.md). */
export interface TimeLimits {
  lockMs: number;
  statementMs: number;
  idleMs: number;
}

export interface FrozenPeerStack {
  stack: Stack;
  /** Instance A: the one a test SIGSTOPs. */
  frozen: ServerInstance;
  project: WorkloadProject;
  /** Sessions of A idle in a transaction that holds a granted lock on `features` rows. */
  frozenHolders(): Promise<number>;
  /** SIGCONTs A (harmless when it runs), stops it and the stack. */
  close(): Promise<void>;
}

/**
 * Starts the stack (Postgres, Redis, instance B) and instance A with `limits`, the webhook
 * worker off and budgets no test reaches, and imports a voting project of `voters` voters and
 * `features` features.
 */
export async function startFrozenPeerStack(
  limits: TimeLimits,
  appName: string,
  voters: number,
  features: number,
): Promise<FrozenPeerStack> {
  const env = {
    RATE_LIMIT_READS_PER_MINUTE: "100000",
    RATE_LIMIT_WRITES_PER_MINUTE: "100000",
    DATABASE_LOCK_TIMEOUT_MS: String(limits.lockMs),
    DATABASE_STATEMENT_TIMEOUT_MS: String(limits.statementMs),
    DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: String(limits.idleMs),
    WEBHOOK_WORKER: "off",
  };
  const stack = await startStack({ env });
  // PGAPPNAME names A's sessions, so that frozenHolders can tell its transactions from B's.
  const frozen = await startServer({ ...stack.env, PGAPPNAME: appName });
  const project = await importVotingProject(stack.seeder, voters, features);
  return {
    stack,
    frozen,
    project,
    async frozenHolders() {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity a
        WHERE a.application_name = ${appName} AND a.state = 'idle in transaction'
          AND EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.relation = 'features'::regclass AND l.granted)`.execute(
        stack.seeder.handle.db,
      );
      return rows[0]!.n;
    },
    async close() {
      signalGroup(frozen.child, "SIGCONT");
      await frozen.stop().catch(() => {});
      await stack.close();
    },
  };
}

/**
 * SIGSTOPs A, under the load a test started on it, until one of its transactions holds a
 * feature's row lock between statements (at most 100 tries, SIGCONT between them). Returns
 * `performance.now()` at the freeze, or 0 when A was never caught holding it.
 */
export async function freezeHoldingFeature(peer: FrozenPeerStack): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    await sleep(30 + ((attempt * 37) % 70));
    signalGroup(peer.frozen.child, "SIGSTOP");
    await sleep(200);
    if ((await peer.frozenHolders()) > 0) return performance.now();
    signalGroup(peer.frozen.child, "SIGCONT");
  }
  return 0;
}

/** The answer of a write that hit a database time limit: 500 internal with the time-limit message. */
export function isTimeLimitAnswer(result: HttpResult): boolean {
  return result.status === 500 && json(result)?.error?.code === "internal" && json(result)?.error?.message === TIME_LIMIT_MESSAGE;
}

/**
 * Whether an answer of A across its stop is retryable without having run: a 500 internal, or a
 * 409 idempotency_in_progress with Retry-After (a Redis claim in flight when A stopped outlives
 * its command timeout once A runs again; src/middleware/idempotency.ts).
 */
export function isRetryableAfterFreeze(result: HttpResult): boolean {
  return (
    (result.status === 500 && json(result)?.error?.code === "internal") ||
    (result.status === 409 && json(result)?.error?.code === "idempotency_in_progress" && result.headers["retry-after"] !== undefined)
  );
}
