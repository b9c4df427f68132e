/**
 * Postgres killed mid-write (the whole server SIGKILLed: postmaster and backends). A row lock
 * held by the test pins a vote and a comment inside their transactions (the vote row and the
 * comment row inserted, the feature's counter update waiting), so the crash lands mid-write
 * every time. Clients get 500 internal with X-Request-Id and nothing else; nothing half-written
 * survives; the same Idempotency-Key then succeeds exactly once; the server's pool reconnects by
 * itself, without a restart of the server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectNoLeak } from "./support/assertions.ts";
import { type HttpResult, json, quantile, send, startLoad } from "./support/http.ts";
import { counterMismatches } from "./support/invariants.ts";
import { sleep, waitUntil } from "./support/processes.ts";
import { importVotingProject } from "./support/seed.ts";
import { serverTrouble } from "./support/server.ts";
import { type Stack, startStack } from "./support/stack.ts";
import { recordCount } from "./support/tally.ts";
import { mixedWorkload } from "./support/workload.ts";

let stack: Stack;
let slug: string;
let key: string;
let tokens: string[];
let featureIds: number[];

beforeAll(async () => {
  stack = await startStack({ env: { RATE_LIMIT_READS_PER_MINUTE: "100000", RATE_LIMIT_WRITES_PER_MINUTE: "100000" } });
  ({ slug, secretKey: key, tokens, featureIds } = await importVotingProject(stack.seeder, 10, 3));
});
afterAll(() => stack?.close());

const base = () => `/api/v3/projects/${slug}`;
const asVoter = (i: number, extra: Record<string, string> = {}) => ({ "X-API-Key": key, "X-VF-Anon": tokens[i]!, ...extra });

function vote(featureId: number, voter: number, idempotencyKey: string): Promise<HttpResult> {
  return send(stack.server.origin, {
    method: "POST",
    path: `${base()}/features/${featureId}/vote`,
    headers: asVoter(voter, { "Idempotency-Key": idempotencyKey }),
  });
}

function comment(featureId: number, voter: number, content: string, idempotencyKey: string): Promise<HttpResult> {
  return send(stack.server.origin, {
    method: "POST",
    path: `${base()}/features/${featureId}/comments`,
    headers: asVoter(voter, { "Idempotency-Key": idempotencyKey }),
    body: JSON.stringify({ content }),
  });
}

function expectInternal(result: HttpResult): void {
  expect(
    result.error,
    `${result.error}: server ${stack.server.child.exitCode === null ? "alive" : `exited ${stack.server.child.exitCode}`}\n${stack.server.output().slice(-3000)}`,
  ).toBeUndefined();
  expect(result.status).toBe(500);
  expect(result.headers["x-request-id"]).toMatch(/.+/);
  expectNoLeak(result.text);
}

describe("Postgres killed mid-write", () => {
  it("answers 500 internal, keeps no partial write, and runs the retried key exactly once", async () => {
    const featureId = featureIds[0]!;
    const content = `mid-write comment ${Date.now()}`;
    const db = stack.seeder.handle.db;
    const voteRowsBefore = await db.selectFrom("votes").select("voter_id").where("feature_id", "=", featureId).execute();
    expect(voteRowsBefore).toHaveLength(0);

    // Hold the feature row: both writes insert their row, then wait on the counter update.
    const holder = await stack.pg.sql.reserve();
    await holder`BEGIN`;
    await holder`SELECT id FROM features WHERE id = ${featureId} FOR UPDATE`;
    const pendingVote = vote(featureId, 0, "pg-kill-vote");
    const pendingComment = comment(featureId, 0, content, "pg-kill-comment");
    await waitUntil(
      "both writes to wait on the row lock, mid-transaction",
      async () => {
        const [row] = await stack.pg.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()`;
        return row!.n === 2;
      },
      15_000,
      50,
    );

    await stack.pg.kill();
    holder.release();
    const [votedDuringCrash, commentedDuringCrash] = await Promise.all([pendingVote, pendingComment]);
    expectInternal(votedDuringCrash);
    expectInternal(commentedDuringCrash);

    // While the database is down: quick, clean 500s; the server process stays up.
    const downRead = await send(stack.server.origin, { path: `${base()}/features`, headers: { "X-API-Key": key } });
    expectInternal(downRead);
    expect(downRead.ms).toBeLessThan(2000);
    const downWrite = await vote(featureIds[1]!, 1, "pg-down-vote");
    expectInternal(downWrite);
    expect(stack.server.child.exitCode).toBeNull();

    await stack.pg.restart();

    // Nothing of the interrupted transactions survived crash recovery.
    expect(await db.selectFrom("votes").select("voter_id").where("feature_id", "=", featureId).execute()).toHaveLength(0);
    expect(await db.selectFrom("comments").select("id").where("content", "=", content).execute()).toHaveLength(0);
    expect(await counterMismatches(db, slug)).toEqual([]);

    // The server's pool reconnects by itself.
    await waitUntil(
      "the server to reach the database again",
      async () => {
        const r = await send(stack.server.origin, { path: `${base()}/features/${featureId}`, headers: { "X-API-Key": key } });
        return r.status === 200;
      },
      30_000,
      250,
    );

    // The same keys now run once; replays return the recorded response byte for byte.
    const voted = await vote(featureId, 0, "pg-kill-vote");
    expect(voted.status).toBe(200);
    expect(voted.headers["idempotent-replay"]).toBeUndefined();
    expect(json(voted).data).toMatchObject({ feature_id: featureId, has_voted: true, vote_count: 1 });
    const votedAgain = await vote(featureId, 0, "pg-kill-vote");
    expect(votedAgain.status).toBe(200);
    expect(votedAgain.headers["idempotent-replay"]).toBe("true");
    expect(votedAgain.text).toBe(voted.text);

    const commented = await comment(featureId, 0, content, "pg-kill-comment");
    expect(commented.status).toBe(201);
    expect(commented.headers["idempotent-replay"]).toBeUndefined();
    const commentedAgain = await comment(featureId, 0, content, "pg-kill-comment");
    expect(commentedAgain.status).toBe(201);
    expect(commentedAgain.headers["idempotent-replay"]).toBe("true");
    expect(commentedAgain.text).toBe(commented.text);

    const downVoted = await vote(featureIds[1]!, 1, "pg-down-vote");
    expect(downVoted.status).toBe(200);

    expect(await db.selectFrom("votes").select("voter_id").where("feature_id", "=", featureId).execute()).toHaveLength(1);
    expect(await db.selectFrom("comments").select("id").where("content", "=", content).execute()).toHaveLength(1);
    expect(await counterMismatches(db, slug)).toEqual([]);
    recordCount("faults", "postgres SIGKILL mid-write");
  });

  it("under a steady load: every answer is complete (2xx/409, or a clean 500 while down), and counters stay exact", async () => {
    const project = { slug, secretKey: key, embedKey: "", ids: {}, tokens, featureIds };
    // A request that needs a new database connection just as Postgres dies waits for the
    // server's connect bound (db/connect.ts: connect_timeout, 10 s) before its clean 500; the
    // client waits longer than that bound, or it would give up a moment before the answer.
    const workload = mixedWorkload(project, "pg-load");
    const load = startLoad(stack.server.origin, (i) => ({ ...workload(i), timeoutMs: 15_000 }), {
      concurrency: 6,
      maxMs: 30_000,
      maxRequests: 20_000,
    });
    await sleep(1000);
    const killedAt = performance.now() - load.startedAt;
    await stack.pg.kill();
    await sleep(1500);
    await stack.pg.restart();
    const restartedAt = performance.now() - load.startedAt;
    await waitUntil(
      "the load to succeed again",
      () => {
        const recent = load.samples.filter((s) => s.at > restartedAt + 500);
        return recent.length > 20 && recent.slice(-20).every((s) => s.status > 0 && s.status < 500);
      },
      30_000,
      200,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${serverTrouble(stack.server)}`);
    });
    const samples = await load.stop();

    expect(
      samples.every((s) => s.error === undefined),
      `${JSON.stringify(samples.filter((s) => s.error).slice(0, 3))}\n${serverTrouble(stack.server)}`,
    ).toBe(true);
    const failed = samples.filter((s) => s.status >= 500);
    expect(failed.length).toBeGreaterThan(0);
    for (const s of failed) {
      expectInternal(s);
      // Failures only around the outage, and the outage never made a request hang.
      expect(s.at).toBeGreaterThan(killedAt - 2000);
    }
    expect(
      quantile(
        samples.map((s) => s.ms),
        0.99,
      ),
    ).toBeLessThan(2000);
    const answered = samples.filter((s) => s.status < 500);
    expect(
      answered.every((s) => [200, 201, 409].includes(s.status)),
      JSON.stringify(answered.filter((s) => ![200, 201, 409].includes(s.status)).slice(0, 3)),
    ).toBe(true);
    expect(stack.server.child.exitCode).toBeNull();
    expect(await counterMismatches(stack.seeder.handle.db, slug)).toEqual([]);
    console.info(`postgres SIGKILL under load: ${samples.length} requests, ${failed.length} clean 500s while down`);
    recordCount("faults", "postgres SIGKILL under load");
  });
});
