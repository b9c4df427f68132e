/**
 * Opens the database the config names: Postgres through the `postgres` driver when
 * DATABASE_URL is set, otherwise the embedded PGlite (same SQL, same migrations).
 */
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import type { PGlite as PGliteInstance } from "@electric-sql/pglite";
import {
  type CompiledQuery,
  DummyDriver,
  Kysely,
  type LogEvent,
  Migrator,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  sql,
} from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import postgres from "postgres";
import { lockDataDir } from "./data-dir-lock.ts";
import { migrations } from "./migrations/index.ts";
import { GENERIC_PLAN_PARAMETERS, preparedStatementClient } from "./prepared-statement-client.ts";
import type { Database } from "./schema.ts";

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  /** "postgres" for a server, "pglite" for the embedded default. */
  kind: "postgres" | "pglite";
  close(): Promise<void>;
  /**
   * Subscribes to a NOTIFY channel (postgres-js `listen` on its own connection, re-subscribing
   * after a reconnect; PGlite `listen`). `onNotify` also runs whenever the subscription is
   * (re)established, then with no payload. Resolves to an unsubscribe function.
   */
  listen(channel: string, onNotify: (payload?: string) => void): Promise<() => Promise<void>>;
  /**
   * True when this open created the database: a new PGlite directory (or memory://), filled from
   * `initialDataDir` when one was given, else by initdb. Always false for Postgres.
   */
  created: boolean;
}

export interface DatabaseOptions {
  DATABASE_URL?: string | undefined;
  /** PGlite data directory, or "memory://" for a throwaway database. */
  PGLITE_DIR?: string;
  /**
   * Postgres pool size; default 10. A second pool of this size serves the statements marked for
   * a generic plan (db/prepared-statement-client.ts), so up to twice as many connections open.
   */
  poolSize?: number;
  /**
   * A PGlite data directory as a tarball (what PGlite's dumpDataDir writes, gzip or plain) that a
   * new embedded database starts from instead of running initdb, which costs 6-40 s of CPU on
   * a small machine. Used only when PGLITE_DIR holds no database yet; ignored with DATABASE_URL.
   */
  initialDataDir?: Blob;
  /**
   * Postgres session bounds sent with every connection's start-up (lock_timeout,
   * statement_timeout, idle_in_transaction_session_timeout); unset or 0 = none. Not applied to
   * PGlite: one connection, no other session to wait for, and no timer inside it.
   */
  limits?: SessionLimits;
  /**
   * What opens the database ("npm start", "npm run admin"), written into the PGlite directory's
   * lock file so that another process refused by it can say who holds the directory
   * (db/data-dir-lock.ts); default: the script's file name. Unused with DATABASE_URL.
   */
  holder?: string;
}

/** Postgres session bounds, in milliseconds each (0 = none). */
export interface SessionLimits {
  lockTimeoutMs?: number;
  statementTimeoutMs?: number;
  idleInTransactionTimeoutMs?: number;
}

/** The start-up parameters of `limits` (Postgres takes a bare number as milliseconds). */
function limitParameters(limits: SessionLimits | undefined): Record<string, string> {
  const parameters: Record<string, string> = {};
  if (limits?.lockTimeoutMs !== undefined) parameters.lock_timeout = String(limits.lockTimeoutMs);
  if (limits?.statementTimeoutMs !== undefined) parameters.statement_timeout = String(limits.statementTimeoutMs);
  if (limits?.idleInTransactionTimeoutMs !== undefined) {
    parameters.idle_in_transaction_session_timeout = String(limits.idleInTransactionTimeoutMs);
  }
  return parameters;
}

/**
 * The statement bound of the statements marked with LOCK_BOUND_COMMENT
 * (db/prepared-statement-client.ts): the lock bound, in milliseconds; 0 (leave them the
 * connection's statement bound) when there is no lock bound or the statement bound is tighter.
 */
function lockBoundOf(limits: SessionLimits | undefined): number {
  const lock = limits?.lockTimeoutMs ?? 0;
  const statement = limits?.statementTimeoutMs ?? 0;
  return lock > 0 && (statement === 0 || lock < statement) ? lock : 0;
}

/**
 * Whether the PGlite directory `dir` already holds a database (its PG_VERSION file exists).
 * "memory://" never does; any other scheme ("idb://"...) is assumed to, so nothing is loaded
 * over it.
 */
export function pgliteDatabaseExists(dir: string): boolean {
  if (dir === "memory://") return false;
  if (dir.includes("://")) return true;
  return existsSync(join(dir, "PG_VERSION"));
}

/**
 * Opens (but does not migrate) the database. A PGlite directory is locked for this process
 * until close(): throws DataDirInUseError (db/data-dir-lock.ts) when another live process holds
 * it, before PGlite touches its files.
 */
export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.DATABASE_URL) {
    const clientOptions = {
      max: options.poolSize ?? 10,
      onnotice: () => {},
      connect_timeout: 10,
      idle_timeout: 60,
      // The driver's default backoff grows to 20 s between reconnects once the database has been
      // away, and queries wait for it: requests then hang long after the database is back. Retry
      // at most every second so they fail fast while it is down and recover within a second.
      backoff: (attempt: number) => Math.min(0.05 * 2 ** attempt, 1) * (0.5 + Math.random() / 2),
    };
    // Dates are RFC 3339 in UTC on the wire; keep the session in UTC too.
    // The limits bound how long a request waits for a stalled peer's locks (README, "Database
    // time limits"); as start-up parameters they cost no statement and survive reconnects.
    const connection = { TimeZone: "UTC", ...limitParameters(options.limits) };
    const client = postgres(options.DATABASE_URL, { ...clientOptions, connection });
    // A second pool, as large, for the statements marked for a generic plan when sent alone
    // (prepared-statement-client.ts): its connections start in that plan mode.
    const genericPlanClient = postgres(options.DATABASE_URL, {
      ...clientOptions,
      connection: { ...connection, ...GENERIC_PLAN_PARAMETERS },
    });
    const db = new Kysely<Database>({
      dialect: new PostgresJSDialect({
        postgres: preparedStatementClient(client, genericPlanClient, { lockBoundMs: lockBoundOf(options.limits) }),
      }),
    });
    const listen = async (channel: string, onNotify: (payload?: string) => void) => {
      const subscription = await client.listen(
        channel,
        (payload) => onNotify(payload),
        () => onNotify(),
      );
      return () => subscription.unlisten();
    };
    return { db, kind: "postgres", close: () => db.destroy(), listen, created: false };
  }
  const dir = options.PGLITE_DIR ?? "./data";
  // Only a directory on disk is shared with other processes (memory:// is this process's own).
  // Taken first: a refused open answers at once, before the engine loads.
  const lock = dir.includes("://") ? undefined : lockDataDir(dir, options.holder ?? `node ${basename(process.argv[1] ?? "")}`);
  const created = !pgliteDatabaseExists(dir);
  let pglite: PGliteInstance;
  let PGliteDialect: typeof import("kysely-pglite-dialect").PGliteDialect;
  try {
    // Loaded only when used: a server on Postgres does not carry the embedded engine (~30 MB).
    const [{ PGlite }, { pg_trgm }, { fuzzystrmatch }, { btree_gin }, dialect] = await Promise.all([
      import("@electric-sql/pglite"),
      import("@electric-sql/pglite/contrib/pg_trgm"),
      import("@electric-sql/pglite/contrib/fuzzystrmatch"),
      import("@electric-sql/pglite/contrib/btree_gin"),
      import("kysely-pglite-dialect"),
    ]);
    PGliteDialect = dialect.PGliteDialect;
    pglite = await PGlite.create({
      ...(dir === "memory://" ? {} : { dataDir: dir }),
      ...(created && options.initialDataDir ? { loadDataDir: options.initialDataDir } : {}),
      extensions: { pg_trgm, fuzzystrmatch, btree_gin },
    });
  } catch (error) {
    lock?.release();
    throw error;
  }
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  const listen = async (channel: string, onNotify: (payload?: string) => void) => {
    const unsubscribe = await pglite.listen(channel, (payload) => onNotify(payload));
    onNotify();
    return () => unsubscribe();
  };
  const close = async () => {
    try {
      await db.destroy();
    } finally {
      lock?.release();
    }
  };
  return { db, kind: "pglite", close, listen, created };
}

/**
 * A kysely that compiles Postgres SQL and connects to nothing (executing a query returns no
 * rows): for reading the text of a statement, as the bench and the tests do. `onQuery` receives
 * every statement executed through it (SQL text and parameters), e.g. to EXPLAIN it elsewhere.
 */
export function compileOnlyDatabase(onQuery?: (query: CompiledQuery) => void): Db {
  return new Kysely<Database>({
    ...(onQuery ? { log: (event: LogEvent) => onQuery(event.query) } : {}),
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
}

/**
 * Applies every pending migration; throws the first migration error. Runs on one connection with
 * no lock or statement bound (a migration rewriting a large table, or waiting for another
 * instance's migration lock, must not be cancelled by the request bounds), and gives that
 * connection back with its own bounds restored.
 */
export async function migrateToLatest(db: Db): Promise<void> {
  await db.connection().execute(async (connection) => {
    await sql`SELECT set_config('lock_timeout', '0', false), set_config('statement_timeout', '0', false)`.execute(connection);
    try {
      const migrator = new Migrator({
        db: connection,
        provider: { getMigrations: async () => migrations },
      });
      const { error } = await migrator.migrateToLatest();
      if (error) throw error;
    } finally {
      // Back to the connection's start-up values (reset_val) before the pool hands it out again.
      await sql`SELECT set_config(name, reset_val, false) FROM pg_settings WHERE name IN ('lock_timeout', 'statement_timeout')`.execute(
        connection,
      );
    }
  });
}
