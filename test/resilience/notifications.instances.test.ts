/**
 * Notifications across two server processes on one Postgres and one Redis (engagement-api-v3.md,
 * "Notifications": at most one per event, type and voter whatever the number of instances,
 * crashes or retries, and in the inbox within 10 seconds of the change). Both instances run the
 * consumer. A feature has 5,000 subscribers; an owner status change reaches every inbox within
 * 10 s; then the instance fanning out a second change is SIGKILLed in the middle of its INSERT
 * (held there by a row lock the test takes on one subscriber, which the foreign key check of the
 * notification row waits for), and the other instance makes every notification: each subscriber
 * ends with exactly one per change.
 */

import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, send } from "./support/http.ts";
import { spawnTracked, stopChild, waitUntil } from "./support/processes.ts";
import { anonVoters, idsOf } from "./support/seed.ts";
import { type ServerInstance, startServer } from "./support/server.ts";
import { type Stack, startStack } from "./support/stack.ts";

const FOLLOWERS = 5000;

let stack: Stack;
let b: ServerInstance;

beforeAll(async () => {
  stack = await startStack({ env: { PGAPPNAME: "board-a" } });
  b = await startServer({ ...stack.env, PGAPPNAME: "board-b" });
}, 120_000);
afterAll(async () => {
  await b?.stop().catch(() => {});
  await stack?.close();
});

describe("two instances consume the events into notifications", () => {
  it("5,000 subscribers: every inbox within 10 s, and exactly one each when the fanning-out instance is SIGKILLed", async () => {
    const db = stack.seeder.handle.db;
    const { voters, tokens } = anonVoters(2);
    const project = await stack.seeder.importProject({
      voters,
      features: [{ ref: "f0", board: "roadmap", column: "c-planned", heading: "Popular" }],
    });
    const featureId = idsOf(project).features.f0 as number;
    const { id: projectId } = await db.selectFrom("projects").select("id").where("slug", "=", project.slug).executeTakeFirstOrThrow();
    const followers = await sql<{ id: number }>`
      INSERT INTO voters (public_id, project_id, kind, display_name)
      SELECT 'follower-' || ${project.slug} || '-' || g, ${projectId}, 'anonymous', 'Follower ' || g FROM generate_series(1, ${FOLLOWERS - 2}) AS g
      RETURNING id`.execute(db);
    await sql`
      INSERT INTO subscriptions (feature_id, voter_id, project_id, reason)
      SELECT ${featureId}, id, ${projectId}, 'vote' FROM voters WHERE project_id = ${projectId}`.execute(db);
    const key = { "X-API-Key": project.secretKey, "Content-Type": "application/json" };
    const patch = (origin: string, status: string) =>
      send(origin, {
        method: "PATCH",
        path: `/api/v3/projects/${project.slug}/admin/features/${featureId}`,
        headers: key,
        body: JSON.stringify({ status }),
      });
    /** Notifications of each status change of the feature so far, oldest change first. */
    const perChange = async () => {
      const { rows } = await sql<{ seq: string; n: number; voters: number }>`
        SELECT e.seq::text AS seq, count(n.id)::int AS n, count(DISTINCT n.voter_id)::int AS voters
        FROM events e LEFT JOIN notifications n ON n.event_seq = e.seq AND n.type = 'status_changed'
        WHERE e.project_id = ${projectId} AND e.type = 'feature.status_changed'
        GROUP BY e.seq ORDER BY e.seq`.execute(db);
      return rows;
    };

    // 1. Both alive: the 5,000th notification is in an inbox within 10 s of the answer.
    const changed = await patch(stack.server.origin, "in_progress");
    expect(changed.status, changed.text).toBe(200);
    const answeredAt = performance.now();
    await waitUntil("5,000 notifications", async () => (await perChange())[0]?.n === FOLLOWERS, 10_000, 50);
    const seconds = (performance.now() - answeredAt) / 1000;
    expect(seconds).toBeLessThan(10);
    const inbox = await send(b.origin, {
      path: `/api/v3/projects/${project.slug}/notifications`,
      headers: { "X-API-Key": project.embedKey, "X-VF-Anon": tokens[0]! },
    });
    expect(inbox.status).toBe(200);
    expect(json(inbox).data.map((n: { type: string; data: unknown }) => [n.type, n.data])).toEqual([
      ["status_changed", { from: "planned", to: "in_progress" }],
    ]);

    // 2. The instance fanning out the next change dies in the middle of it. The lock is taken
    // once the change has answered (a transaction begun before it would hold its event back from
    // the feed); should a consumer take the event in the few milliseconds between, the change is
    // made again.
    const middle = followers.rows[Math.floor(followers.rows.length / 2)]!.id;
    let killed: string | undefined;
    for (let attempt = 0; attempt < 5 && killed === undefined; attempt++) {
      const answer = await patch(b.origin, attempt % 2 === 0 ? "done" : "in_progress");
      expect(answer.status, answer.text).toBe(200);
      await db.transaction().execute(async (trx) => {
        await sql`SELECT id FROM voters WHERE id = ${middle} FOR UPDATE`.execute(trx);
        const waiting = async () => {
          const { rows } = await sql<{ application_name: string }>`
            SELECT application_name FROM pg_stat_activity
            WHERE wait_event_type = 'Lock' AND query ILIKE '%INSERT INTO notifications%'`.execute(db);
          return rows[0]?.application_name;
        };
        const deadline = Date.now() + 5000;
        let name = await waiting();
        while (name === undefined && Date.now() < deadline && (await perChange()).at(-1)!.n === 0) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          name = await waiting();
        }
        if (name !== "board-a" && name !== "board-b") return;
        killed = name;
        const victim = killed === "board-a" ? stack.server : b;
        victim.child.kill("SIGKILL");
        await victim.exited(10_000);
        // Nothing of the dead instance's batch was committed.
        expect((await perChange()).at(-1)!.n).toBe(0);
      });
    }
    expect(killed).toBeDefined();
    const survivor = killed === "board-a" ? b : stack.server;
    await waitUntil("the survivor to make every notification", async () => (await perChange()).at(-1)!.n >= FOLLOWERS, 30_000, 100);
    // Another round of the survivor adds nothing.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const changes = await perChange();
    expect(changes.length).toBeGreaterThanOrEqual(2);
    for (const change of changes) expect(change).toMatchObject({ n: FOLLOWERS, voters: FOLLOWERS });
    const count = await send(survivor.origin, {
      path: `/api/v3/projects/${project.slug}/notifications/unread-count`,
      headers: { "X-API-Key": project.embedKey, "X-VF-Anon": tokens[1]! },
    });
    expect(json(count).data).toEqual({ unread_count: changes.length });
  }, 120_000);

  it("WEBHOOK_WORKER=off: the server makes no notification, npm run worker makes them", async () => {
    const db = stack.seeder.handle.db;
    for (const instance of [stack.server, b]) await instance.stop().catch(() => {});
    const server = await startServer({ ...stack.env, WEBHOOK_WORKER: "off" });
    let worker: ReturnType<typeof spawnTracked> | undefined;
    try {
      const { voters, tokens } = anonVoters(1);
      const project = await stack.seeder.importProject({
        voters,
        features: [{ ref: "f0", board: "roadmap", column: "c-planned", heading: "Followed" }],
      });
      const featureId = idsOf(project).features.f0 as number;
      const { id: projectId } = await db.selectFrom("projects").select("id").where("slug", "=", project.slug).executeTakeFirstOrThrow();
      await sql`INSERT INTO subscriptions (feature_id, voter_id, project_id, reason)
        SELECT ${featureId}, id, ${projectId}, 'vote' FROM voters WHERE project_id = ${projectId}`.execute(db);
      const changed = await send(server.origin, {
        method: "PATCH",
        path: `/api/v3/projects/${project.slug}/admin/features/${featureId}`,
        headers: { "X-API-Key": project.secretKey, "Content-Type": "application/json" },
        body: JSON.stringify({ status: "done" }),
      });
      expect(changed.status, changed.text).toBe(200);
      const unread = async () =>
        json(
          await send(server.origin, {
            path: `/api/v3/projects/${project.slug}/notifications/unread-count`,
            headers: { "X-API-Key": project.embedKey, "X-VF-Anon": tokens[0]! },
          }),
        ).data.unread_count as number;
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(await unread()).toBe(0);
      let output = "";
      worker = spawnTracked(process.execPath, ["--import", "tsx", "scripts/worker.ts"], {
        cwd: fileURLToPath(new URL("../../", import.meta.url)),
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "info", ...stack.env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      worker.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
      worker.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
      await waitUntil("the worker to make the notification", async () => (await unread()) === 1, 20_000, 100);
      expect(output).toMatch(/webhook worker started/);
    } finally {
      if (worker) await stopChild(worker, "SIGTERM", 10_000);
      await server.stop();
    }
  }, 120_000);
});
