/**
 * SIGTERM under load (src/server.ts: graceful shutdown). Votes pinned mid-transaction by a row
 * lock are in flight when the signal arrives: they finish and are committed; new connections are
 * refused (no half answers, no 5xx); the process exits 0 within SHUTDOWN_GRACE_SECONDS. A request
 * stuck past the grace period does not keep the process alive.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectEnvelope } from "./support/assertions.ts";
import { type HttpResult, json, resetAgents, send, startLoad } from "./support/http.ts";
import { counterMismatches } from "./support/invariants.ts";
import { sleep, waitUntil } from "./support/processes.ts";
import { importVotingProject } from "./support/seed.ts";
import { type ServerInstance, startServer } from "./support/server.ts";
import { type Stack, startStack } from "./support/stack.ts";
import { recordCount } from "./support/tally.ts";

const GRACE_SECONDS = 4;
let stack: Stack;
let slug: string;
let key: string;
let tokens: string[];
let featureIds: number[];

beforeAll(async () => {
  stack = await startStack({
    env: { SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS), RATE_LIMIT_READS_PER_MINUTE: "100000", RATE_LIMIT_WRITES_PER_MINUTE: "100000" },
  });
  ({ slug, secretKey: key, tokens, featureIds } = await importVotingProject(stack.seeder, 12, 2));
});
afterAll(() => stack?.close());

function vote(server: ServerInstance, featureId: number, voter: number): Promise<HttpResult> {
  return send(server.origin, {
    method: "POST",
    path: `/api/v3/projects/${slug}/features/${featureId}/vote`,
    headers: { "X-API-Key": key, "X-VF-Anon": tokens[voter]! },
  });
}

/** Holds feature `featureId`'s row lock and waits until `waiting` requests queue behind it. */
async function pinVotes(server: ServerInstance, featureId: number, voters: number[]) {
  const holder = await stack.pg.sql.reserve();
  await holder`BEGIN`;
  await holder`SELECT id FROM features WHERE id = ${featureId} FOR UPDATE`;
  const pending = voters.map((voter) => vote(server, featureId, voter));
  await waitUntil(
    `${voters.length} votes waiting on the row lock`,
    async () => {
      const [row] = await stack.pg.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()`;
      return row!.n === voters.length;
    },
    15_000,
    50,
  );
  return {
    pending,
    async release() {
      await holder`ROLLBACK`;
      holder.release();
    },
  };
}

const REFUSED = new Set(["ECONNREFUSED", "ECONNRESET", "socket hang up", "EPIPE"]);

describe("SIGTERM under load", () => {
  it("finishes in-flight requests, refuses new ones cleanly and exits 0 within the grace period", async () => {
    const server = stack.server;
    const featureId = featureIds[0]!;
    const pinned = await pinVotes(server, featureId, [0, 1, 2, 3, 4]);
    const load = startLoad(
      server.origin,
      (i) => ({ label: "read", path: `/api/v3/projects/${slug}/features/${featureIds[i % 2]}`, headers: { "X-API-Key": key } }),
      { concurrency: 4, maxMs: 20_000, maxRequests: 5000 },
    );
    await sleep(500);

    const signalledAt = performance.now();
    server.child.kill("SIGTERM");
    await sleep(300);
    // A new connection after the signal is refused; nothing half-answered.
    const fresh = await send(server.origin, { path: `/api/v3/projects/${slug}`, headers: { "X-API-Key": key } }, { fresh: true });
    expect(fresh.status).toBe(0);
    expect(fresh.error).toBe("ECONNREFUSED");
    expect(server.child.exitCode).toBeNull(); // still finishing the pinned votes

    await sleep(700);
    await pinned.release();
    const votes = await Promise.all(pinned.pending);
    for (const result of votes) {
      expect(result.status, result.error ?? result.text).toBe(200);
      expect(json(result).data).toMatchObject({ feature_id: featureId, has_voted: true });
    }
    const exit = await server.exited(GRACE_SECONDS * 1000);
    const exitedAfterMs = performance.now() - signalledAt;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(exitedAfterMs).toBeLessThan(GRACE_SECONDS * 1000);

    const samples = await load.stop();
    resetAgents();
    const afterSignal = samples.filter((s) => s.at + load.startedAt > signalledAt);
    for (const s of samples) {
      if (s.status === 0) {
        expect(REFUSED.has(s.error!), s.error).toBe(true);
        expect(s.at + load.startedAt).toBeGreaterThan(signalledAt - 50);
      } else {
        expect(s.status).toBe(200);
        expectEnvelope(JSON.parse(s.text));
      }
    }
    expect(afterSignal.some((s) => s.status === 0)).toBe(true);

    // The votes that were in flight are committed, with their counters.
    const rows = await stack.seeder.handle.db.selectFrom("votes").select("voter_id").where("feature_id", "=", featureId).execute();
    expect(rows).toHaveLength(5);
    expect(await counterMismatches(stack.seeder.handle.db, slug)).toEqual([]);
    const log = server.output();
    expect(log).toMatch(/"signal":"SIGTERM".*shutting down/);
    expect(log).toMatch(/"msg":"stopped"/);
    console.info(
      `SIGTERM: ${votes.length} in-flight votes finished, ${samples.length} load requests, exit 0 after ${exitedAfterMs.toFixed(0)} ms`,
    );
    recordCount("faults", "SIGTERM under load");
  });

  it("exits within the grace period even when a request is stuck past it", async () => {
    const server = await startServer(stack.env);
    try {
      const pinned = await pinVotes(server, featureIds[1]!, [5]);
      const signalledAt = performance.now();
      server.child.kill("SIGTERM");
      const exit = await server.exited((GRACE_SECONDS + 3) * 1000);
      const exitedAfterMs = performance.now() - signalledAt;
      const [stuck] = await Promise.all(pinned.pending);
      await pinned.release();
      expect(exit, server.output().slice(-2000)).not.toBe("timeout");
      expect(exit).toEqual({ code: 0, signal: null });
      expect(exitedAfterMs).toBeLessThan((GRACE_SECONDS + 1.5) * 1000);
      // The stuck request's connection was closed: no response, not a half one.
      expect(stuck!.status).toBe(0);
      expect(REFUSED.has(stuck!.error!), stuck!.error).toBe(true);
      recordCount("faults", "SIGTERM with a request stuck past the grace period");
    } finally {
      await server.stop();
    }
  });
});
