/**
 * No change without its event, no event without its change (owner-api-v3.md, "Events": a
 * transactional outbox; an event is never lost by a crash or restart). Under a steady load of
 * votes, withdrawals and comments, Postgres is SIGKILLed and restarted, then the server process
 * is SIGKILLed and a new one started; afterwards changes and events are compared 1:1: every vote
 * row has its vote.created with no later vote.deleted and every vote.created without a later
 * vote.deleted has its row; every comment row has its comment.created and every comment.created
 * its row; each event names its change exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { committedEvents, eventPosition } from "../../src/events/outbox.ts";
import { type LoadRun, startLoad } from "./support/http.ts";
import { sleep, waitUntil } from "./support/processes.ts";
import { importVotingProject } from "./support/seed.ts";
import { type ServerInstance, serverTrouble, startServer } from "./support/server.ts";
import { type Stack, startStack } from "./support/stack.ts";
import { recordCount } from "./support/tally.ts";
import type { WorkloadProject } from "./support/workload.ts";

let stack: Stack;
let project: WorkloadProject;
let restarted: ServerInstance | undefined;

beforeAll(async () => {
  stack = await startStack({ env: { RATE_LIMIT_READS_PER_MINUTE: "100000", RATE_LIMIT_WRITES_PER_MINUTE: "100000" } });
  project = await importVotingProject(stack.seeder, 24, 3);
});
afterAll(async () => {
  await restarted?.stop().catch(() => {});
  await stack?.close();
});

/** Votes, withdrawals and comments by 24 voters on 3 features, through the server at `origin()`. */
function writeLoad(origin: () => string, tag: string): LoadRun {
  const base = `/api/v3/projects/${project.slug}`;
  // Paths are absolute URLs (send resolves them against the first origin), so the load follows a restart.
  return startLoad(
    origin(),
    (i) => {
      const feature = project.featureIds[i % project.featureIds.length]!;
      const headers = { "X-API-Key": project.secretKey, "X-VF-Anon": project.tokens[(i * 7) % project.tokens.length]! };
      const path = `${origin()}${base}/features/${feature}`;
      if (i % 5 === 4) {
        return {
          label: "comment",
          method: "POST",
          path: `${path}/comments`,
          headers: { ...headers, "Content-Type": "application/json" },
          body: JSON.stringify({ content: `${tag} comment ${i}` }),
        };
      }
      return { label: "vote", method: i % 5 < 2 ? "POST" : "DELETE", path: `${path}/vote`, headers };
    },
    { concurrency: 6, maxMs: 60_000, maxRequests: 20_000 },
  );
}

/**
 * Waits until the load's last 20 answers are all below 500 (the stack is back); on time out, the
 * error names the last answers and what `server` logged of slow requests and errors.
 */
async function recovered(load: LoadRun, since: number, server: ServerInstance): Promise<void> {
  await waitUntil(
    "the load to succeed again",
    () => {
      const recent = load.samples.filter((s) => s.at > since);
      return recent.length > 20 && recent.slice(-20).every((s) => s.status > 0 && s.status < 500);
    },
    45_000,
    200,
  ).catch((error: Error) => {
    const last = load.samples.slice(-5).map(({ label, status, error, ms }) => ({ label, status, error, ms }));
    throw new Error(`${error.message}\nlast answers: ${JSON.stringify(last)}\n${serverTrouble(server)}`);
  });
}

describe("events survive crashes 1:1 with their changes", () => {
  it("Postgres SIGKILL and server SIGKILL under write load: every change has its event and every event its change", async () => {
    let origin = stack.server.origin;
    const load = writeLoad(() => origin, "crash");
    await sleep(1500);
    await stack.pg.kill();
    await sleep(1000);
    await stack.pg.restart();
    await recovered(load, performance.now() - load.startedAt, stack.server);

    await sleep(500);
    stack.server.child.kill("SIGKILL");
    await stack.server.exited(10_000);
    restarted = await startServer(stack.env);
    origin = restarted.origin;
    await recovered(load, performance.now() - load.startedAt, restarted);
    await sleep(500);
    const samples = await load.stop();
    const failed = samples.filter((s) => s.status >= 500 || s.error !== undefined).length;
    expect(failed, "the crashes interrupted requests").toBeGreaterThan(0);
    expect(samples.filter((s) => s.status === 200 || s.status === 201).length).toBeGreaterThan(100);

    const db = stack.seeder.handle.db;
    const { id: projectId } = await db.selectFrom("projects").select("id").where("slug", "=", project.slug).executeTakeFirstOrThrow();
    // Every transaction has ended (the server is idle), so the feed lists everything committed.
    const events = await committedEvents(db, { projectId, limit: 1_000_000 });
    const voteRows = await db
      .selectFrom("votes")
      .innerJoin("voters", "voters.id", "votes.voter_id")
      .select(["votes.feature_id", "voters.public_id"])
      .where("votes.project_id", "=", projectId)
      .execute();
    const commentRows = await db.selectFrom("comments").select("id").where("project_id", "=", projectId).execute();

    // Per feature, insertion order (seq, taken under the feature's row lock) is the order of the
    // changes; the feed's (transaction id, seq) order may interleave concurrent ones differently.
    const bySeq = [...events].sort((a, b) => Number(BigInt(eventPosition(a.id)!.seq) - BigInt(eventPosition(b.id)!.seq)));
    const voted = new Map<string, boolean>();
    for (const event of bySeq.filter((e) => e.type === "vote.created" || e.type === "vote.deleted")) {
      const object = event.data.object as { feature_id: number; voter_id: string };
      const key = `${object.feature_id}/${object.voter_id}`;
      // A created follows nothing or a deleted, a deleted follows a created: one event per change.
      expect(voted.get(key) ?? false, `${event.type} ${key}`).toBe(event.type === "vote.deleted");
      voted.set(key, event.type === "vote.created");
    }
    const rows = new Set(voteRows.map((row) => `${row.feature_id}/${row.public_id}`));
    const standing = new Set([...voted].filter(([, present]) => present).map(([key]) => key));
    expect([...standing].sort()).toEqual([...rows].sort());

    const created = events.filter((e) => e.type === "comment.created").map((e) => (e.data.object as { id: number }).id);
    expect(new Set(created).size).toBe(created.length);
    expect([...created].sort((a, b) => a - b)).toEqual(commentRows.map((row) => row.id).sort((a, b) => a - b));
    expect(events.filter((e) => !["vote.created", "vote.deleted", "comment.created"].includes(e.type))).toEqual([]);

    console.info(
      `events crash test: ${samples.length} requests (${failed} interrupted), ${events.length} events, ` +
        `${voteRows.length} vote rows, ${commentRows.length} comments`,
    );
    recordCount("faults", "events 1:1 after postgres and server SIGKILL");
  });
});
