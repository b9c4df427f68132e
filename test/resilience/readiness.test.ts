/**
 * GET /api/v3/ready (docs/operations.md, "Health and readiness"): the real server on its own Postgres cluster
 * (reached through a loopback proxy the test can hold) and Redis. While Postgres hangs (the proxy
 * holds every byte: connections open, no answer) /ready answers 503 within
 * about its 2 s bound naming the database, and /health, the liveness probe, stays 200; a hung or
 * killed Redis answers 503 naming redis; once each comes back /ready is 200 again. (That
 * concurrent callers share one probe is shown in test/readiness.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DelayProxy, startDelayProxy } from "./support/delay-proxy.ts";
import { json, resetAgents, send } from "./support/http.ts";
import { type PostgresInstance, startPostgres } from "./support/postgres.ts";
import { waitUntil } from "./support/processes.ts";
import { type RedisInstance, startRedis } from "./support/redis.ts";
import { type ServerInstance, startServer } from "./support/server.ts";

let pg: PostgresInstance;
let redis: RedisInstance;
let pgProxy: DelayProxy;
let server: ServerInstance;

beforeAll(async () => {
  [pg, redis] = await Promise.all([startPostgres(), startRedis()]);
  pgProxy = await startDelayProxy(pg.port);
  server = await startServer({ DATABASE_URL: `postgres://postgres@127.0.0.1:${pgProxy.port}/postgres`, REDIS_URL: redis.url });
});
afterAll(async () => {
  resetAgents();
  await server?.stop().catch(() => {});
  await pgProxy?.close().catch(() => {});
  await redis?.close().catch(() => {});
  await pg?.close().catch(() => {});
});

const ready = () => send(server.origin, { path: "/api/v3/ready", timeoutMs: 10_000 });
const health = () => send(server.origin, { path: "/api/v3/health", timeoutMs: 10_000 });

async function expectReady(): Promise<void> {
  await waitUntil("/ready to answer 200", async () => (await ready()).status === 200, 20_000, 200);
  const answer = await ready();
  expect(json(answer)).toEqual({ data: { status: "ready", checks: { database: "ok", redis: "ok" } }, meta: null, error: null });
  expect(answer.headers["cache-control"]).toBe("no-store");
}

describe("readiness probe", () => {
  it("is 200 with every dependency answering", async () => {
    await expectReady();
  });

  it("answers 503 naming the database within ~2 s while Postgres hangs; /health stays 200", async () => {
    pgProxy.pause();
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, () => ready()));
      for (const answer of answers) {
        expect(answer.error).toBeUndefined();
        expect(answer.status).toBe(503);
        expect(answer.ms).toBeLessThan(3000);
        const body = json(answer);
        expect(body.data).toEqual({ status: "not_ready", checks: { database: "timeout", redis: "ok" } });
        expect(body.error).toMatchObject({ code: "database_unavailable", field: null });
        expect(body.error.message).toMatch(/database/);
      }
      // The probe still hanging is reported at once, without waiting for another 2 s.
      const again = await ready();
      expect(again.status).toBe(503);
      expect(again.ms).toBeLessThan(1000);
      const live = await health();
      expect(live.status).toBe(200);
      expect(json(live).data).toEqual({ status: "ok", version: "3" });
    } finally {
      pgProxy.resume();
    }
    await expectReady();
  });

  it("answers 503 naming redis while Redis hangs or is down, 200 once it is back", async () => {
    redis.hang();
    try {
      const answer = await ready();
      expect(answer.status).toBe(503);
      expect(answer.ms).toBeLessThan(3000);
      expect(json(answer).data.checks).toEqual({ database: "ok", redis: expect.stringMatching(/^(failed|timeout)$/) });
      expect(json(answer).error.code).toBe("redis_unavailable");
      expect((await health()).status).toBe(200);
    } finally {
      redis.resume();
    }
    await expectReady();

    await redis.kill();
    const down = await ready();
    expect(down.status).toBe(503);
    expect(json(down).error.code).toBe("redis_unavailable");
    await redis.restart();
    await expectReady();
  });

  it("answers 503 naming the database while Postgres is down, 200 once it restarted", async () => {
    await pg.kill();
    const down = await ready();
    expect(down.status).toBe(503);
    expect(down.ms).toBeLessThan(3000);
    expect(json(down).error.code).toBe("database_unavailable");
    expect(json(down).data.checks.database).toMatch(/^(failed|timeout)$/);
    await pg.restart();
    await expectReady();
  });
});
