/**
 * A frozen instance holding a row lock (docs/operations.md, "Database time limits"): two server processes on
 * one Postgres and one Redis; instance A writes comments on one feature under load and is
 * SIGSTOPped while one of its transactions holds that feature's row lock (idle in transaction,
 * checked in pg_stat_activity / pg_locks). Instance B's writes to the same feature then wait at
 * most the lock bound (plus a margin) and answer 500 internal, nothing written, or succeed once
 * Postgres ends A's idle transaction (idle_in_transaction_session_timeout) and its locks are
 * released, while A is still stopped. After SIGCONT, A answers again; every answer of either
 * instance is a 201 or a retryable 500 internal (A also a 409 idempotency_in_progress, when its
 * key's claim outlived the Redis command timeout across the stop); no refused write left a row;
 * a refused key retried with the same Idempotency-Key runs; the feature's comment_count equals
 * its rows.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, expectNoLeak } from "./support/assertions.ts";
import {
  type FrozenPeerStack,
  freezeHoldingFeature,
  isRetryableAfterFreeze,
  isTimeLimitAnswer,
  startFrozenPeerStack,
} from "./support/frozen-peer.ts";
import { type HttpResult, json, type LoadRun, send, startLoad } from "./support/http.ts";
import { counterMismatches } from "./support/invariants.ts";
import { signalGroup, waitUntil } from "./support/processes.ts";

const LOCK_MS = 1000;
const STATEMENT_MS = 3000;
const IDLE_MS = 3000;
/** Scheduling slack on a small shared machine: spawning, HTTP, the transaction's other statements. */
const MARGIN_MS = 2000;

let peer: FrozenPeerStack;

beforeAll(async () => {
  peer = await startFrozenPeerStack({ lockMs: LOCK_MS, statementMs: STATEMENT_MS, idleMs: IDLE_MS }, "fb-frozen-instance", 16, 1);
});
afterAll(async () => {
  await peer?.close();
});

const featureId = () => peer.project.featureIds[0]!;

/** A keyed comment POST on the feature by voter `i`, its content naming the key. */
function comment(key: string, i: number, timeoutMs = 30_000) {
  return {
    label: key,
    method: "POST",
    path: `/api/v3/projects/${peer.project.slug}/features/${featureId()}/comments`,
    headers: {
      "X-API-Key": peer.project.secretKey,
      "X-VF-Anon": peer.project.tokens[i % peer.project.tokens.length]!,
      "Idempotency-Key": key,
    },
    body: JSON.stringify({ content: `key ${key}` }),
    timeoutMs,
  };
}

/** Comments stored with the content of `key`. */
async function rowsOf(key: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM comments WHERE content = ${`key ${key}`}`.execute(
    peer.stack.seeder.handle.db,
  );
  return rows[0]!.n;
}

describe("a peer frozen inside a transaction", () => {
  it("delays the other instance's writes by at most the lock bound, and its locks are released", async () => {
    const { stack, frozen, project } = peer;
    const load: LoadRun = startLoad(frozen.origin, (i) => comment(`a-${i}`, i), { concurrency: 6, maxMs: 90_000, maxRequests: 100_000 });
    const frozenAt = await freezeHoldingFeature(peer);
    expect(frozenAt, "instance A was never caught holding the feature's row lock").toBeGreaterThan(0);

    // B writes to the same feature, two at a time, until one goes through while A stays stopped.
    const probes: { key: string; result: HttpResult; sentAt: number }[] = [];
    let through = false;
    let next = 0;
    const prober = async () => {
      while (!through && performance.now() - frozenAt < IDLE_MS + STATEMENT_MS + 2 * MARGIN_MS) {
        const i = next++;
        const key = `b-${i}`;
        const sentAt = performance.now() - frozenAt;
        const result = await send(stack.server.origin, comment(key, i, 20_000));
        probes.push({ key, result, sentAt });
        if (result.status === 201) through = true;
      }
    };
    await Promise.all([prober(), prober()]);
    const stillHeld = await peer.frozenHolders();
    signalGroup(frozen.child, "SIGCONT");
    const resumedAt = performance.now() - frozenAt;

    const firstThrough = probes.find((p) => p.result.status === 201)!;
    console.info(
      `frozen peer: ${probes.length} writes of B, ${probes.filter((p) => p.result.status === 500).length} refused, ` +
        `slowest ${Math.round(Math.max(...probes.map((p) => p.result.ms)))} ms (lock bound ${LOCK_MS} ms); first through ` +
        `${Math.round(firstThrough.sentAt + firstThrough.result.ms)} ms after the freeze (idle bound ${IDLE_MS} ms); A resumed at ${Math.round(resumedAt)} ms`,
    );
    const summary = probes.map((p) => `${p.key}@${Math.round(p.sentAt)}ms: ${p.result.status} in ${Math.round(p.result.ms)} ms`);
    // The freeze blocked B (a refusal at the bound) and Postgres ended A's transaction (a write went through).
    expect(
      probes.some((p) => isTimeLimitAnswer(p.result)),
      summary.join("\n"),
    ).toBe(true);
    expect(through, summary.join("\n")).toBe(true);
    expect(stillHeld).toBe(0);
    expect(resumedAt).toBeLessThan(IDLE_MS + STATEMENT_MS + 2 * MARGIN_MS + LOCK_MS + MARGIN_MS);
    for (const { key, result } of probes) {
      expect(result.ms, summary.join("\n")).toBeLessThan(LOCK_MS + MARGIN_MS);
      if (result.status === 201) {
        expect(await rowsOf(key)).toBe(1);
        continue;
      }
      expect(isTimeLimitAnswer(result), `${key}: ${result.status} ${result.text}`).toBe(true);
      expectError(result.status, json(result), "internal");
      expectNoLeak(result.text);
      expect(result.headers["x-request-id"]).toBeTruthy();
      // Rolled back: nothing of the refused write is stored.
      expect(await rowsOf(key)).toBe(0);
    }

    // A recovers: its own writes answer again once it runs.
    await waitUntil(
      "instance A to answer a write after SIGCONT",
      async () => (await send(frozen.origin, comment(`a-after-${Date.now()}`, 3, 10_000))).status === 201,
      20_000,
      200,
    );
    const samples = await load.stop();
    const unexpected = samples.filter((s) => s.status !== 201 && !isRetryableAfterFreeze(s));
    expect(
      unexpected.map((s) => `${s.status} ${s.error ?? ""} ${s.text}`),
      "A's answers are 201, a retryable 500 or a 409 idempotency_in_progress",
    ).toEqual([]);
    // A's refused writes (its transaction ended under it, or its handler never ran) left nothing either.
    for (const sample of samples.filter((s) => s.status === 500 || s.status === 409)) expect(await rowsOf(sample.label)).toBe(0);

    // A refused key retried with the same Idempotency-Key runs (its claim was released).
    const refused = probes.filter((p) => p.result.status === 500);
    for (const { key } of refused.slice(0, 5)) {
      const retried = await send(stack.server.origin, comment(key, Number(key.slice(2)), 10_000));
      expect(retried.status, retried.text).toBe(201);
      expect(retried.headers["idempotent-replay"]).toBeUndefined();
      expect(await rowsOf(key)).toBe(1);
    }
    expect(await counterMismatches(stack.seeder.handle.db, project.slug)).toEqual([]);
  });
});
