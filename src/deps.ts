/**
 * Opens what the app depends on, from a Config: the database (Postgres or PGlite), Redis or
 * the in-process stores, and the logger. `close()` releases all of it.
 */
import pino, { type Logger } from "pino";
import { migrateToLatest, openDatabase } from "../db/connect.ts";
import type { Config } from "./config.ts";
import type { AppDeps } from "./lib/context.ts";
import { listenForCacheInvalidation } from "./lib/project-cache.ts";
import { MemoryIdempotencyStore, MemoryRateLimiter } from "./store/memory.ts";
import { connectRedis, RedisIdempotencyStore, RedisRateLimiter } from "./store/redis.ts";

/** A pino logger that never writes credentials, even if a caller logs a request's headers. */
export function createLogger(level: Config["LOG_LEVEL"]): Logger {
  return pino({
    level,
    redact: {
      paths: ["req.headers['x-api-key']", "req.headers['x-vf-token']", "req.headers['x-vf-anon']", "headers['x-api-key']", "*.sso_secret", "*.key", "*.anon_token"],
      censor: "[redacted]",
    },
  });
}

export interface OpenedDeps extends AppDeps {
  close(): Promise<void>;
}

/** Opens and migrates the database and connects the stores. */
export async function openDeps(config: Config, logger: Logger = createLogger(config.LOG_LEVEL)): Promise<OpenedDeps> {
  const database = await openDatabase({ DATABASE_URL: config.DATABASE_URL, PGLITE_DIR: config.PGLITE_DIR });
  await migrateToLatest(database.db);
  // Other instances' admin changes (key regeneration, import) clear this process's project cache.
  const stopListening = await listenForCacheInvalidation(database.listen);
  if (config.REDIS_URL) {
    const redis = connectRedis(config.REDIS_URL, config.REDIS_COMMAND_TIMEOUT_MS, config.REDIS_KEY_PREFIX);
    redis.on("error", () => {
      // Failures are reported by the stores when they fall back; the client reconnects itself.
    });
    const rateLimiter = new RedisRateLimiter(redis, logger, config.RATE_LIMIT_FALLBACK_FACTOR);
    const idempotencyStore = new RedisIdempotencyStore(redis, logger);
    return {
      db: database.db, config, logger, rateLimiter, idempotencyStore, now: () => new Date(),
      async close() {
        await rateLimiter.close();
        await idempotencyStore.close();
        redis.disconnect();
        await stopListening();
        await database.close();
      },
    };
  }
  const rateLimiter = new MemoryRateLimiter();
  const idempotencyStore = new MemoryIdempotencyStore();
  return {
    db: database.db, config, logger, rateLimiter, idempotencyStore, now: () => new Date(),
    async close() {
      await rateLimiter.close();
      await idempotencyStore.close();
      await stopListening();
      await database.close();
    },
  };
}
