/**
 * One whole deployment for a scenario: a dedicated Postgres cluster, optionally a dedicated
 * Redis, a seeder on the database and the server as a child process configured to use them.
 */
import { resetAgents } from "./http.ts";
import { type PostgresInstance, startPostgres } from "./postgres.ts";
import { type RedisInstance, startRedis } from "./redis.ts";
import { openSeeder, type Seeder } from "./seed.ts";
import { type ServerInstance, startServer } from "./server.ts";

export interface Stack {
  pg: PostgresInstance;
  redis: RedisInstance | undefined;
  seeder: Seeder;
  server: ServerInstance;
  /** Env the server was started with (to start another one alike). */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startStack(options: { redis?: boolean; env?: Record<string, string> } = {}): Promise<Stack> {
  const [pg, redis] = await Promise.all([startPostgres(), options.redis === false ? undefined : startRedis()]);
  let seeder: Seeder | undefined;
  let server: ServerInstance | undefined;
  try {
    seeder = await openSeeder(pg.url);
    const env = {
      DATABASE_URL: pg.url,
      ...(redis ? { REDIS_URL: redis.url } : {}),
      ...options.env,
    };
    server = await startServer(env);
    const started = { pg, redis, seeder, server, env };
    return {
      ...started,
      async close() {
        resetAgents();
        await started.server.stop().catch(() => {});
        await seeder!.close().catch(() => {});
        await redis?.close().catch(() => {});
        await pg.close().catch(() => {});
      },
    };
  } catch (error) {
    await server?.stop().catch(() => {});
    await seeder?.close().catch(() => {});
    await redis?.close().catch(() => {});
    await pg.close().catch(() => {});
    throw error;
  }
}
