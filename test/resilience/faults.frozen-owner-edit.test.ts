/**
 * Owner edits of one feature while a peer is frozen holding its row lock (docs/operations.md,
 * "Database time limits": a write blocked by a frozen peer answers within the lock bound, 500
 * internal with the time-limit message, nothing written). Two server processes on one Postgres
 * and one Redis with the documented default bounds (lock 5 s, statement 15 s, idle in
 * transaction 10 s). Instance A PATCHes the feature under load and is SIGSTOPped while one of its
 * transactions holds the row (idle in transaction, seen in pg_stat_activity / pg_locks). Instance
 * B then sends three PATCHes of that feature 300 ms apart, so that they queue behind each other
 * as well as behind A (Postgres takes a row lock in two waits: the tuple's place in the queue,
 * then the holder's transaction; lock_timeout bounds each wait on its own), and keeps PATCHing
 * until one goes through once Postgres ends A's idle transaction. Every answer of B comes within
 * the lock bound plus a margin, each a 200 or the time-limit 500. After SIGCONT, A answers again,
 * and the outbox holds one feature.updated event for every 200 of either instance and none for a
 * refusal: no write lost or doubled; a refused key retried with its Idempotency-Key runs once.
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
import { signalGroup, sleep, waitUntil } from "./support/processes.ts";

/** The documented defaults (docs/operations.md, "Configuration"). */
const LOCK_MS = 5000;
const STATEMENT_MS = 15_000;
const IDLE_MS = 10_000;
/** Scheduling slack on a small shared machine: HTTP, key and idempotency checks, the other statements. */
const MARGIN_MS = 1500;

let peer: FrozenPeerStack;

beforeAll(async () => {
  peer = await startFrozenPeerStack({ lockMs: LOCK_MS, statementMs: STATEMENT_MS, idleMs: IDLE_MS }, "fb-frozen-owner", 1, 1);
});
afterAll(async () => {
  await peer?.close();
});

const featureId = () => peer.project.featureIds[0]!;

/** A keyed owner PATCH of the feature's description, the description naming the key. */
function edit(key: string, timeoutMs = 30_000) {
  return {
    label: key,
    method: "PATCH",
    path: `/api/v3/projects/${peer.project.slug}/admin/features/${featureId()}`,
    headers: { "X-API-Key": peer.project.secretKey, "Idempotency-Key": key, "X-Request-Id": key },
    body: JSON.stringify({ description: `edit ${key}` }),
    timeoutMs,
  };
}

/** feature.updated events of the feature whose description became that of `key`. */
async function eventsOf(key: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM events
    WHERE type = 'feature.updated' AND (data->'object'->>'id')::int = ${featureId()}
      AND data->'changes'->'description'->>'to' = ${`edit ${key}`}`.execute(peer.stack.seeder.handle.db);
  return rows[0]!.n;
}

describe("owner edits of a feature whose row a frozen peer holds", () => {
  it("answer within the lock bound, and every write that answered 200 is stored once", async () => {
    const { stack, frozen } = peer;
    const load: LoadRun = startLoad(frozen.origin, (i) => edit(`a-${i}`), { concurrency: 3, maxMs: 60_000, maxRequests: 100_000 });
    const frozenAt = await freezeHoldingFeature(peer);
    expect(frozenAt, "instance A was never caught holding the feature's row lock").toBeGreaterThan(0);

    // B: three edits 300 ms apart, queued behind A's lock and behind each other.
    const probes: { key: string; result: HttpResult; sentAt: number }[] = [];
    const probe = async (key: string) => {
      const sentAt = performance.now() - frozenAt;
      const result = await send(stack.server.origin, edit(key, 20_000));
      probes.push({ key, result, sentAt });
      return result;
    };
    await Promise.all(
      [0, 1, 2].map(async (i) => {
        await sleep(300 * i);
        await probe(`b-queued-${i}`);
      }),
    );
    // Then one at a time until one goes through: Postgres ends A's idle transaction at the idle bound.
    let through = probes.some((p) => p.result.status === 200);
    for (let i = 0; !through && performance.now() - frozenAt < IDLE_MS + LOCK_MS + 2 * MARGIN_MS; i++) {
      through = (await probe(`b-${i}`)).status === 200;
    }
    const stillHeld = await peer.frozenHolders();
    signalGroup(frozen.child, "SIGCONT");

    const summary = probes.map((p) => `${p.key}@${Math.round(p.sentAt)}ms: ${p.result.status} in ${Math.round(p.result.ms)} ms`).join("\n");
    console.info(
      `frozen owner edit: ${probes.length} PATCHes of B, ${probes.filter((p) => p.result.status === 500).length} refused, ` +
        `slowest ${Math.round(Math.max(...probes.map((p) => p.result.ms)))} ms (lock bound ${LOCK_MS} ms)\n${summary}`,
    );
    expect(
      probes.some((p) => isTimeLimitAnswer(p.result)),
      summary,
    ).toBe(true);
    expect(through, summary).toBe(true);
    expect(stillHeld).toBe(0);
    for (const { key, result } of probes) {
      expect(result.ms, `${key} answered after the lock bound\n${summary}`).toBeLessThanOrEqual(LOCK_MS + MARGIN_MS);
      if (result.status === 200) continue;
      expect(isTimeLimitAnswer(result), `${key}: ${result.status} ${result.text}`).toBe(true);
      expectError(result.status, json(result), "internal");
      expectNoLeak(result.text);
      expect(result.headers["x-request-id"]).toBeTruthy();
      expect(result.headers["retry-after"]).toBeUndefined();
    }

    // A recovers: its own edits answer again once it runs.
    await waitUntil(
      "instance A to answer an edit after SIGCONT",
      async () => (await send(frozen.origin, edit(`a-after-${Date.now()}`, 10_000))).status === 200,
      20_000,
      200,
    );
    const samples = await load.stop();
    expect(
      samples.filter((s) => s.status !== 200 && !isRetryableAfterFreeze(s)).map((s) => `${s.status} ${s.error ?? ""} ${s.text}`),
      "A's answers are 200, a retryable 500 or a 409 idempotency_in_progress",
    ).toEqual([]);

    // Nothing lost or doubled: one event per edit that answered 200, none per refusal.
    const answered = [
      ...probes.map((p) => ({ key: p.key, status: p.result.status })),
      ...samples.map((s) => ({ key: s.label, status: s.status })),
    ];
    for (const { key, status } of answered) expect(await eventsOf(key), `${key} answered ${status}`).toBe(status === 200 ? 1 : 0);

    // A refused key retried with the same Idempotency-Key runs, once.
    for (const { key } of probes.filter((p) => p.result.status === 500)) {
      const retried = await send(stack.server.origin, edit(key, 10_000));
      expect(retried.status, retried.text).toBe(200);
      expect(retried.headers["idempotent-replay"]).toBeUndefined();
      expect(await eventsOf(key)).toBe(1);
    }
  });
});
