/**
 * Opens what the app depends on, from a Config: the database (Postgres or PGlite), Redis or
 * the in-process stores, and the logger. `close()` releases all of it.
 */
import { once } from "node:events";
import { sql } from "kysely";
import pino, { type Logger } from "pino";
import { type DatabaseHandle, migrateToLatest, openDatabase, pgliteDatabaseExists } from "../db/connect.ts";
import type { Config } from "./config.ts";
import { createAppCaches, listenForCacheInvalidation } from "./lib/data/app-caches.ts";
import { type Probe, Readiness } from "./lib/data/readiness.ts";
import type { AppDeps } from "./lib/http/context.ts";
import { RedisIdempotencyStore } from "./store/idempotency.redis.ts";
import { MemoryIdempotencyStore, MemoryRateLimiter } from "./store/memory.ts";
import { connectRedis, RedisRateLimiter, RedisSharedAnswers } from "./store/redis.ts";

/**
 * A pino logger that never writes credentials, even if a caller logs a request's headers;
 * `destination` receives the JSON lines (default standard output; tests collect them there).
 */
export function createLogger(level: Config["LOG_LEVEL"], destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: {
      paths: [
        "req.headers['x-api-key']",
        "req.headers['x-vf-token']",
        "req.headers['x-vf-anon']",
        "headers['x-api-key']",
        "*.sso_secret",
        "*.key",
        "*.anon_token",
      ],
      censor: "[redacted]",
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

export interface OpenedDeps extends AppDeps {
  /** True when this start created the embedded database (see DatabaseHandle.created). */
  databaseCreated: boolean;
  /** Subscribes to a Postgres NOTIFY channel (DatabaseHandle.listen): the webhook worker's wake-up. */
  listen: DatabaseHandle["listen"];
  close(): Promise<void>;
}

export interface OpenDepsOptions {
  /** Tarball a new embedded database starts from instead of initdb (DatabaseOptions.initialDataDir). */
  initialDataDir?: Blob;
  /** What opens an embedded database, for its lock file ("npm start"; DatabaseOptions.holder). */
  holder?: string;
  /** Receives one line per start-up step ("database: migrating..."). */
  progress?: (line: string) => void;
  /** The clock (AppDeps.now) the app and its rate limiters read; the system clock by default. */
  now?: () => Date;
  /**
   * An open database to use instead of opening one from the config (tests share one embedded
   * database per process); it is migrated, and left open by close().
   */
  database?: DatabaseHandle;
}

/** What opening the database is about to do, in words (a first start may take a while). */
function describeOpening(config: Config, initialDataDir: Blob | undefined): string {
  if (config.DATABASE_URL) return "database: connecting to Postgres...";
  if (pgliteDatabaseExists(config.PGLITE_DIR)) return `database: opening the embedded database in ${config.PGLITE_DIR}...`;
  return initialDataDir
    ? `database: creating the embedded database in ${config.PGLITE_DIR} from the prepared demo database...`
    : `database: creating the embedded database in ${config.PGLITE_DIR} (initdb runs once: 20-40 s on a small machine)...`;
}

/** Opens and migrates the database and connects the stores. */
export async function openDeps(
  config: Config,
  logger: Logger = createLogger(config.LOG_LEVEL),
  options: OpenDepsOptions = {},
): Promise<OpenedDeps> {
  const progress = options.progress ?? (() => {});
  const now = options.now ?? (() => new Date());
  const nowMs = () => now().getTime();
  progress(describeOpening(config, options.initialDataDir));
  const database =
    options.database ??
    (await openDatabase({
      DATABASE_URL: config.DATABASE_URL,
      PGLITE_DIR: config.PGLITE_DIR,
      limits: {
        lockTimeoutMs: config.DATABASE_LOCK_TIMEOUT_MS,
        statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
        idleInTransactionTimeoutMs: config.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      },
      ...(options.initialDataDir ? { initialDataDir: options.initialDataDir } : {}),
      ...(options.holder ? { holder: options.holder } : {}),
    }));
  progress("database: applying migrations...");
  await migrateToLatest(database.db);
  const caches = createAppCaches(config);
  // Other instances' admin changes (key regeneration, import) clear this app's caches.
  const stopListening = await listenForCacheInvalidation(database.listen, caches);
  const stores = config.REDIS_URL ? openRedisStores(config, logger, config.REDIS_URL, nowMs) : openMemoryStores(nowMs);
  return {
    db: database.db,
    databaseCreated: database.created,
    listen: database.listen,
    config,
    logger,
    rateLimiter: stores.rateLimiter,
    contentRevisions: stores.rateLimiter,
    idempotencyStore: stores.idempotencyStore,
    ...(stores.sharedAnswers ? { sharedAnswers: stores.sharedAnswers } : {}),
    caches,
    now,
    importProgress: new Map(),
    readiness: new Readiness({ database: () => sql`select 1`.execute(database.db), redis: stores.ping }),
    async close() {
      await stores.close();
      await stopListening();
      if (!options.database) await database.close();
    },
  };
}

/** How long a readiness probe waits for Redis's first connection: the probe's own bound. */
const READINESS_CONNECT_WAIT_MS = 2000;

/** The shared stores and how to close them. */
interface Stores {
  rateLimiter: RedisRateLimiter | MemoryRateLimiter;
  idempotencyStore: RedisIdempotencyStore | MemoryIdempotencyStore;
  /** Read answers shared by the instances; none in process (one instance). */
  sharedAnswers?: RedisSharedAnswers;
  /** PING of the connection every keyed request uses (rate limit and revisions); none in process. */
  ping: Probe | undefined;
  close(): Promise<void>;
}

/** The stores on Redis, shared by every instance (docs/architecture.md, "What runs"). */
function openRedisStores(config: Config, logger: Logger, url: string, now: () => number): Stores {
  const redis = connectRedis(url, config.REDIS_COMMAND_TIMEOUT_MS, config.REDIS_KEY_PREFIX);
  // A connection of its own: its own (longer) command timeout, and no queue behind the
  // rate limiter's commands.
  const idempotencyRedis = connectRedis(url, config.REDIS_IDEMPOTENCY_TIMEOUT_MS, config.REDIS_KEY_PREFIX);
  for (const client of [redis, idempotencyRedis]) {
    client.on("error", () => {
      // Failures are reported by the stores when a call fails; the client reconnects itself.
    });
  }
  const rateLimiter = new RedisRateLimiter(redis, logger, config.RATE_LIMIT_FALLBACK_FACTOR, now);
  const idempotencyStore = new RedisIdempotencyStore(idempotencyRedis, logger);
  return {
    rateLimiter,
    idempotencyStore,
    sharedAnswers: new RedisSharedAnswers(redis),
    // The offline queue is off, so a command sent while the first connection is still being
    // made fails at once: readiness waits for that connection instead (within its 2 s bound).
    ping: async () => {
      if (redis.status === "wait" || redis.status === "connecting" || redis.status === "connect") {
        await once(redis, "ready", { signal: AbortSignal.timeout(READINESS_CONNECT_WAIT_MS) });
      }
      await redis.ping();
    },
    async close() {
      await rateLimiter.close();
      await idempotencyStore.close();
      redis.disconnect();
      idempotencyRedis.disconnect();
    },
  };
}

/** The in-process stores of the embedded default (one instance). */
function openMemoryStores(now: () => number): Stores {
  const rateLimiter = new MemoryRateLimiter(now);
  const idempotencyStore = new MemoryIdempotencyStore();
  return {
    rateLimiter,
    idempotencyStore,
    ping: undefined,
    async close() {
      await rateLimiter.close();
      await idempotencyStore.close();
    },
  };
}
