/**
 * Faults of Redis under a steady read/write load (docs/architecture.md, "Data rules":
 * "Redis failure must not take the
 * API down: the limiter fails open to a per-process limit, and every Redis call has a short
 * timeout"; "The idempotency claim never falls back to per-process memory": keyed writes are
 * refused, retryably, while their key cannot be claimed in Redis). Real processes: a dedicated
 * redis-server is SIGKILLed and restarted, then SIGSTOPped and SIGCONTed, while the server child
 * keeps answering.
 */
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashSecret } from "../../src/lib/rules/secrets.ts";
import { type HttpResult, quantile, send, startLoad } from "./support/http.ts";
import { sleep, waitUntil } from "./support/processes.ts";
import { importVotingProject } from "./support/seed.ts";
import { type Stack, startStack } from "./support/stack.ts";
import { recordCount } from "./support/tally.ts";
import {
  acceptable,
  acceptableWithoutSharedStore,
  describeFailures,
  errorCode,
  mixedWorkload,
  type WorkloadProject,
} from "./support/workload.ts";

const PROBE_BUDGET = 40;
const COMMAND_TIMEOUT_MS = 250;
const IDEMPOTENCY_TIMEOUT_MS = 500;

let stack: Stack;
let project: WorkloadProject;
let probeKeyId: number;
let redis: Redis;

beforeAll(async () => {
  stack = await startStack({
    env: {
      RATE_LIMIT_READS_PER_MINUTE: "100000",
      RATE_LIMIT_WRITES_PER_MINUTE: "100000",
      // The probe uses the embed key: a small write budget it can exhaust in a second.
      RATE_LIMIT_EMBED_WRITES_PER_MINUTE: String(PROBE_BUDGET),
      REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
      REDIS_IDEMPOTENCY_TIMEOUT_MS: String(IDEMPOTENCY_TIMEOUT_MS),
    },
  });
  project = await importVotingProject(stack.seeder, 20, 5);
  const row = await stack.seeder.handle.db
    .selectFrom("api_keys")
    .select("id")
    .where("key_hash", "=", hashSecret(project.embedKey))
    .executeTakeFirstOrThrow();
  probeKeyId = row.id;
  redis = stack.redis!.client();
});
afterAll(() => stack?.close());

/** The server's logged errors (for failure messages). */
function serverErrors(): string {
  return stack.server
    .logRecords()
    .filter((r) => Number(r.level) >= 50)
    .slice(0, 5)
    .map((r) => JSON.stringify(r).slice(0, 600))
    .join("\n");
}

/** One cheap write on the embed key's budget: counted by the limiter, then refused (no identity). */
function probe(): Promise<HttpResult> {
  return send(stack.server.origin, {
    method: "POST",
    path: `/api/v3/projects/${project.slug}/features/${project.featureIds[0]}/vote`,
    headers: { "X-API-Key": project.embedKey },
  });
}

const remaining = (r: HttpResult) => Number(r.headers["x-ratelimit-remaining"]);
const resetAt = (r: HttpResult) => Number(r.headers["x-ratelimit-reset"]);
/** The server's Redis key for the probe's write window ending at `reset` (prefix fb:). */
const probeRedisKey = (reset: number) => `fb:rl:${probeKeyId}:write:${reset / 60 - 1}`;

describe("Redis killed (SIGKILL) under a steady read/write load", () => {
  it("keeps answering, fails open to the per-process limit, then counts in Redis again", async () => {
    const load = startLoad(stack.server.origin, mixedWorkload(project, "kill"), { concurrency: 6, maxMs: 60_000, maxRequests: 30_000 });
    await sleep(800);

    // Redis up: the probe's budget is counted in Redis.
    const before: HttpResult[] = [];
    for (let i = 0; i < 5; i++) before.push(await probe());
    expect(before.map((r) => r.status)).toEqual([401, 401, 401, 401, 401]);
    const last = before.at(-1)!;
    const counted = Number(await redis.get(probeRedisKey(resetAt(last))));
    expect(counted).toBeGreaterThanOrEqual(1);
    expect(remaining(last)).toBe(PROBE_BUDGET - counted);

    const killedAt = performance.now();
    await stack.redis!.kill();

    // Redis gone: the limiter counts in the process, from a fresh per-process budget, and refuses
    // past it (fail open to a per-process limit, not unlimited, never closed).
    const during: HttpResult[] = [];
    for (let i = 0; i < 100 && !during.some((r) => r.status === 429); i++) during.push(await probe());
    expect(
      during.every((r) => r.status === 401 || r.status === 429),
      JSON.stringify(during.map((r) => r.status)),
    ).toBe(true);
    expect(during.some((r) => r.status === 429)).toBe(true);
    const byWindow = new Map<number, HttpResult[]>();
    for (const r of during) byWindow.set(resetAt(r), [...(byWindow.get(resetAt(r)) ?? []), r]);
    for (const results of byWindow.values()) {
      const allowed = results.filter((r) => r.status === 401);
      // A fresh local count: PROBE_BUDGET - 1, - 2, ... with no gap, whatever Redis had counted.
      expect(allowed.map(remaining)).toEqual(allowed.map((_, i) => PROBE_BUDGET - 1 - i));
      const refused = results.findIndex((r) => r.status === 429);
      if (refused >= 0) expect(refused).toBe(PROBE_BUDGET);
    }
    const refusal = during.find((r) => r.status === 429)!;
    expect(JSON.parse(refusal.text).error.code).toBe("rate_limited");
    expect(Number(refusal.headers["retry-after"])).toBeGreaterThanOrEqual(1);

    await sleep(1500); // the load runs on without Redis
    const outageEnd = performance.now();
    await stack.redis!.restart();

    // Redis back: the server's client reconnects by itself and the budget comes from Redis again.
    let reconnected: HttpResult | undefined;
    await waitUntil(
      "the limiter to count in Redis again",
      async () => {
        const r = await probe();
        const inRedis = await redis.get(probeRedisKey(resetAt(r)));
        if (inRedis !== null && r.status === 401 && remaining(r) === PROBE_BUDGET - Number(inRedis)) reconnected = r;
        return reconnected !== undefined;
      },
      15_000,
      200,
    );
    // Proof that the count is Redis's: move it in Redis and watch the next answer follow.
    for (let attempt = 0; attempt < 3; attempt++) {
      const key = probeRedisKey(resetAt(reconnected!));
      const moved = await redis.incrby(key, 10);
      const next = await probe();
      if (resetAt(next) !== resetAt(reconnected!)) {
        reconnected = next; // a new minute began in between: try again in the new window
        continue;
      }
      expect(remaining(next)).toBe(Math.max(0, PROBE_BUDGET - (moved + 1)));
      break;
    }

    await sleep(800);
    const samples = await load.stop();
    const outage = samples.filter((s) => s.at + load.startedAt >= killedAt && s.at + load.startedAt <= outageEnd);
    expect(outage.length).toBeGreaterThan(20);
    expect(samples.length).toBeGreaterThan(200);
    expect(describeFailures(samples, acceptableWithoutSharedStore), serverErrors()).toBe("");
    expect(samples.every((s) => acceptableWithoutSharedStore(s))).toBe(true);
    // Keyed writes sent while Redis was gone were refused (500 internal: the claim was never
    // sent), never run on a per-process claim; every other request went on.
    const keyedOutage = outage.filter((s) => s.label === "keyed write");
    expect(keyedOutage.length).toBeGreaterThan(0);
    expect(
      keyedOutage.filter((s) => s.status < 300),
      "a keyed write ran without a shared claim",
    ).toEqual([]);
    expect(keyedOutage.every((s) => errorCode(s) === "internal" || errorCode(s) === "idempotency_in_progress")).toBe(true);
    expect(outage.filter((s) => s.label !== "keyed write").every((s) => acceptable(s))).toBe(true);
    expect(
      quantile(
        samples.map((s) => s.ms),
        0.99,
      ),
    ).toBeLessThan(1000);
    expect(
      quantile(
        outage.map((s) => s.ms),
        0.99,
      ),
    ).toBeLessThan(1000);
    console.info(
      `redis SIGKILL: ${samples.length} requests (${outage.length} during the outage), p99 ${quantile(
        samples.map((s) => s.ms),
        0.99,
      ).toFixed(0)} ms, outage p99 ${quantile(
        outage.map((s) => s.ms),
        0.99,
      ).toFixed(0)} ms`,
    );
    recordCount("faults", "redis SIGKILL under load");
  });
});

describe("Redis hung (SIGSTOP) under a steady read/write load", () => {
  it("answers every request within the command timeout instead of hanging, and recovers on SIGCONT", async () => {
    // Before: Redis answers, so requests are quick.
    const warm = await send(stack.server.origin, {
      path: `/api/v3/projects/${project.slug}/features?per_page=5`,
      headers: { "X-API-Key": project.secretKey },
    });
    expect(warm.status).toBe(200);

    stack.redis!.hang();
    let samples: Awaited<ReturnType<ReturnType<typeof startLoad>["finished"]>>;
    try {
      await sleep(100);
      const load = startLoad(stack.server.origin, mixedWorkload(project, "hang"), { concurrency: 6, maxMs: 3000, maxRequests: 5000 });
      samples = await load.finished();
    } finally {
      stack.redis!.resume();
    }
    expect(samples.length).toBeGreaterThan(10);
    expect(describeFailures(samples), serverErrors()).toBe("");
    // A read waits on one Redis call (the limiter); a write on up to four (limiter, idempotency
    // claim, content revision, idempotency record). Each gives up after its command timeout.
    const reads = samples.filter((s) => s.label === "read").map((s) => s.ms);
    const writes = samples.filter((s) => s.label !== "read").map((s) => s.ms);
    expect(Math.max(...reads)).toBeLessThan(COMMAND_TIMEOUT_MS + 750);
    expect(Math.max(...writes)).toBeLessThan(2 * COMMAND_TIMEOUT_MS + 2 * IDEMPOTENCY_TIMEOUT_MS + 750);
    // A keyed write whose claim got no answer did not run: 409 idempotency_in_progress, retryable.
    const refusedKeyed = samples.filter((s) => s.label === "keyed write" && errorCode(s) === "idempotency_in_progress");
    expect(refusedKeyed.length).toBeGreaterThan(0);
    expect(refusedKeyed.every((s) => Number(s.headers["retry-after"]) >= 1)).toBe(true);
    // ...and they did wait for it: the limiter was asked, not skipped.
    expect(quantile(reads, 0.5)).toBeGreaterThanOrEqual(COMMAND_TIMEOUT_MS - 20);

    // After SIGCONT: the same connection serves again, quickly, with counts from Redis.
    await waitUntil(
      "Redis to answer the server again",
      async () => {
        const r = await probe();
        const inRedis = await redis.get(probeRedisKey(resetAt(r)));
        return (
          r.status === 401 && r.ms < COMMAND_TIMEOUT_MS && inRedis !== null && remaining(r) === Math.max(0, PROBE_BUDGET - Number(inRedis))
        );
      },
      15_000,
      200,
    );
    const after = await send(stack.server.origin, {
      path: `/api/v3/projects/${project.slug}/features?per_page=5`,
      headers: { "X-API-Key": project.secretKey },
    });
    expect(after.status).toBe(200);
    expect(after.ms).toBeLessThan(COMMAND_TIMEOUT_MS);
    console.info(
      `redis SIGSTOP: ${samples.length} requests, read max ${Math.max(...reads).toFixed(0)} ms, write max ${Math.max(...writes).toFixed(0)} ms`,
    );
    recordCount("faults", "redis SIGSTOP under load");
  });
});
