/**
 * Idempotency-Key across two instances while the shared Redis is slow or stalled mid-claim
 * (docs/architecture.md, "Data rules":
 * "The idempotency claim never falls back to per-process memory: a request whose
 * claim cannot be made shared does not run"; contract, "Limits": a replay creates nothing new).
 *
 * Two server processes on one Postgres and one Redis: instance B talks to Redis directly,
 * instance A through a loopback proxy that delays or holds its Redis traffic in bursts (replies
 * arriving after the command timeout, commands applied after the client gave up, connections
 * cut with commands in flight), while Redis
 * itself is SIGSTOPped in short bursts (both instances time out). Hundreds of keyed comment POSTs
 * are sent several times each, in parallel across both instances. Afterwards the database holds
 * at most one comment per key, exactly as many as fresh 201s were answered, every replay carried
 * the original body, and every other answer was a retryable 409 idempotency_in_progress (with
 * Retry-After) or 500 internal. Once Redis is healthy again, each key answers its one comment.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError } from "./support/assertions.ts";
import { type DelayProxy, startDelayProxy } from "./support/delay-proxy.ts";
import { type HttpResult, json, send } from "./support/http.ts";
import { sleep } from "./support/processes.ts";
import { importVotingProject } from "./support/seed.ts";
import { type ServerInstance, startServer } from "./support/server.ts";
import { type Stack, startStack } from "./support/stack.ts";
import { recordCount } from "./support/tally.ts";
import type { WorkloadProject } from "./support/workload.ts";

const KEYS = 300;
const SENDS_PER_KEY = 3;
const CONCURRENCY = 8;
const IDEMPOTENCY_TIMEOUT_MS = 400;

let stack: Stack;
let proxy: DelayProxy;
let slowInstance: ServerInstance;
let project: WorkloadProject;

beforeAll(async () => {
  stack = await startStack({
    env: {
      RATE_LIMIT_READS_PER_MINUTE: "100000",
      RATE_LIMIT_WRITES_PER_MINUTE: "100000",
      REDIS_COMMAND_TIMEOUT_MS: "250",
      REDIS_IDEMPOTENCY_TIMEOUT_MS: String(IDEMPOTENCY_TIMEOUT_MS),
    },
  });
  proxy = await startDelayProxy(stack.redis!.port);
  slowInstance = await startServer({ ...stack.env, REDIS_URL: proxy.url });
  project = await importVotingProject(stack.seeder, 20, 3);
});
afterAll(async () => {
  stack?.redis?.resume();
  proxy?.resume();
  await slowInstance?.stop().catch(() => {});
  await proxy?.close();
  await stack?.close();
});

/** A small deterministic generator, so that a failing mix can be replayed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

type Outcome = "executed" | "replayed" | "in_progress" | "internal" | "other";

function outcomeOf(result: HttpResult): Outcome {
  const body = json(result);
  if (result.status === 201) return result.headers["idempotent-replay"] === "true" ? "replayed" : "executed";
  if (result.status === 409 && body?.error?.code === "idempotency_in_progress" && Number(result.headers["retry-after"]) >= 1)
    return "in_progress";
  if (result.status === 500 && body?.error?.code === "internal") return "internal";
  return "other";
}

/** Redis slowed, held or stopped in bursts until `stop` resolves; returns how many bursts of each. */
async function chaos(random: () => number, stopped: () => boolean): Promise<Record<string, number>> {
  const bursts: Record<string, number> = { "proxy delay": 0, "proxy hold": 0, "proxy cut": 0, "redis SIGSTOP": 0, quiet: 0 };
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low));
  while (!stopped()) {
    const pick = random();
    if (pick < 0.3) {
      bursts["proxy delay"]!++;
      proxy.setDelay(between(IDEMPOTENCY_TIMEOUT_MS - 200, IDEMPOTENCY_TIMEOUT_MS + 800));
      await sleep(between(150, 700));
      proxy.setDelay(0);
    } else if (pick < 0.45) {
      // Commands in flight are lost with the connection (never applied), replies too; until
      // the client reconnects nothing can be sent at all.
      bursts["proxy cut"]!++;
      proxy.setDelay(between(200, 600));
      await sleep(between(100, 300));
      proxy.resetConnections();
      proxy.setDelay(0);
    } else if (pick < 0.6) {
      bursts["proxy hold"]!++;
      proxy.pause();
      await sleep(between(200, 900));
      proxy.resume();
    } else if (pick < 0.75) {
      bursts["redis SIGSTOP"]!++;
      stack.redis!.hang();
      await sleep(between(200, 700));
      stack.redis!.resume();
    } else {
      bursts.quiet!++;
    }
    await sleep(between(100, 400));
  }
  proxy.setDelay(0);
  proxy.resume();
  stack.redis!.resume();
  return bursts;
}

describe("keyed comment POSTs replayed across two instances while Redis stalls mid-claim", () => {
  it("never executes a key twice; replays carry the original body; every other answer is a retryable 409 or 500", async () => {
    const started = performance.now();
    const random = seeded(20_240_611);
    const run = `idem-${Date.now().toString(36)}`;
    const instances = [slowInstance, stack.server];
    const content = (i: number) => `${run} key ${i}`;
    const request = (i: number) => ({
      method: "POST",
      path: `/api/v3/projects/${project.slug}/features/${project.featureIds[i % project.featureIds.length]}/comments`,
      headers: {
        "X-API-Key": project.secretKey,
        "X-VF-Anon": project.tokens[i % project.tokens.length]!,
        "Idempotency-Key": `${run}-${i}`,
      },
      body: JSON.stringify({ content: content(i) }),
    });
    const results: HttpResult[][] = Array.from({ length: KEYS }, () => []);

    let done = false;
    const chaosRun = chaos(random, () => done);
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < KEYS) {
          const i = next++;
          const first = i % 2;
          // Two sends in parallel, one to each instance, then a later replay to either one.
          const stagger = Math.floor(random() * 40);
          const parallel = await Promise.all([
            send(instances[first]!.origin, request(i)),
            sleep(stagger).then(() => send(instances[1 - first]!.origin, request(i))),
          ]);
          results[i]!.push(...parallel);
          for (let extra = 2; extra < SENDS_PER_KEY; extra++) {
            results[i]!.push(await send(instances[Math.floor(random() * 2)]!.origin, request(i)));
          }
        }
      }),
    );
    done = true;
    const bursts = await chaosRun;
    const chaosMs = performance.now() - started;

    const counts: Record<Outcome, number> = { executed: 0, replayed: 0, in_progress: 0, internal: 0, other: 0 };
    const others: string[] = [];
    for (const result of results.flat()) {
      const outcome = outcomeOf(result);
      counts[outcome]++;
      if (outcome === "other") others.push(`${result.status} ${result.error ?? ""} ${result.text.slice(0, 160)}`);
    }
    expect(others, others.slice(0, 5).join("\n")).toEqual([]);
    for (const result of results.flat()) {
      if (outcomeOf(result) === "in_progress") expectError(result.status, json(result), "idempotency_in_progress");
      if (outcomeOf(result) === "internal") expectError(result.status, json(result), "internal");
    }

    // What the database holds: never two comments for one key, and one per fresh 201 exactly
    // (a refused request created nothing).
    const stored = async () => {
      const rows = await stack.seeder.handle.db
        .selectFrom("comments")
        .select(["content", (eb) => eb.fn.countAll<number>().as("n")])
        .where("content", "like", `${run} key %`)
        .groupBy("content")
        .execute();
      return new Map(rows.map((row) => [row.content, Number(row.n)]));
    };
    const during = await stored();
    const originals = new Map<number, string>();
    for (let i = 0; i < KEYS; i++) {
      const executed = results[i]!.filter((r) => outcomeOf(r) === "executed");
      expect(executed.length, `key ${i} executed ${executed.length} times`).toBeLessThanOrEqual(1);
      expect(during.get(content(i)) ?? 0, `key ${i}: comments in the database`).toBe(executed.length);
      if (executed[0]) originals.set(i, executed[0].text);
      for (const replay of results[i]!.filter((r) => outcomeOf(r) === "replayed")) {
        // A replay before its original's answer arrived here is still the original's body.
        if (executed[0]) expect(replay.text).toBe(executed[0].text);
        expect(json(replay).data.content).toBe(content(i));
      }
    }
    expect(counts.executed).toBeGreaterThan(0);
    expect(counts.in_progress + counts.internal, "Redis stalls refused some keyed writes").toBeGreaterThan(0);

    // Redis healthy again: every key answers its one comment (the original's body when it ran
    // before), retrying while an earlier lock is still held, and nothing runs twice.
    await sleep(2500); // finished records still being written in the background
    const final = new Map<number, HttpResult>();
    const retriesBefore201: number[] = [];
    next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < KEYS) {
          const i = next++;
          let retries = 0;
          let result = await send(instances[i % 2]!.origin, request(i));
          while (outcomeOf(result) === "in_progress" && retries < 25) {
            retries++;
            await sleep(1000 * Number(result.headers["retry-after"]));
            result = await send(instances[(i + retries) % 2]!.origin, request(i));
          }
          retriesBefore201.push(retries);
          final.set(i, result);
        }
      }),
    );
    const after = await stored();
    let freshAfter = 0;
    for (let i = 0; i < KEYS; i++) {
      const result = final.get(i)!;
      expect(result.status, `key ${i} after recovery: ${result.status} ${result.text.slice(0, 160)}`).toBe(201);
      if (originals.has(i)) {
        expect(result.headers["idempotent-replay"]).toBe("true");
        expect(result.text).toBe(originals.get(i));
      } else {
        // Refused every time before: it runs now, for the first time.
        expect(result.headers["idempotent-replay"]).toBeUndefined();
        freshAfter++;
      }
      expect(after.get(content(i)), `key ${i}: comments after recovery`).toBe(1);
    }
    // No finished record was given up on, and no lock outlived by its request.
    for (const instance of instances) {
      const warnings = instance.logRecords().filter((r) => /gave up|lock expired|dropping/.test(String(r.msg)));
      expect(warnings).toEqual([]);
    }
    const waited = retriesBefore201.filter((n) => n > 0).length;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.info(
      `idempotency under Redis stalls: ${KEYS} keys x ${SENDS_PER_KEY} sends over 2 instances in ${(chaosMs / 1000).toFixed(1)} s ` +
        `(bursts ${JSON.stringify(bursts)}): ${counts.executed} executed, ${counts.replayed} replayed, ` +
        `${counts.in_progress} 409 idempotency_in_progress, ${counts.internal} 500 internal, 0 keys executed twice; ` +
        `after recovery ${KEYS} x 201 (${originals.size} replays of the original, ${freshAfter} first runs of keys refused ` +
        `every time before), ${waited} keys waited on a held lock; ${seconds} s in all`,
    );
    recordCount(
      "faults",
      "Redis stalled or cut mid-claim under keyed replays on two instances",
      bursts["proxy delay"]! + bursts["proxy hold"]! + bursts["proxy cut"]! + bursts["redis SIGSTOP"]!,
    );
    recordCount("races", `keyed comment replays across two instances (${KEYS} keys)`, KEYS);
  });
});
