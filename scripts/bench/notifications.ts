/**
 * Bench rows of the notification fan-out (engagement-api-v3.md, "Notifications": in the inbox
 * within 10 s of the change): an owner status change (PATCH /admin/features/{id}) on a feature
 * with 10,000 subscribers next to the same PATCH on a feature without any, one request at a time,
 * alternating, in the same run; and after each change on the followed feature, the time from its
 * answer until the 10,000th notification of it is in an inbox (the consumer of the server under
 * test makes them; goal < 10 s). The followers are voters added for the run and removed after it
 * with their subscriptions and notifications, so the generated project is left as it was.
 */
import type { Sql } from "postgres";
import type { Row } from "./report.ts";

export const NOTIFICATION_ROUTES = {
  followed: "PATCH admin/features/{id} status, 10,000 subscribers",
  alone: "PATCH admin/features/{id} status, no subscribers",
} as const;

const FOLLOWERS = 10_000;
/** How long a change may take to reach every inbox before the run gives up on it (ms). */
const GIVE_UP_MS = 60_000;

export interface NotificationBenchInput {
  sql: Sql;
  /** The server's origin. */
  base: string;
  projectId: number;
  slug: string;
  /** Two public features of the project on the roadmap (the first gets the subscribers). */
  featureIds: [number, number];
  headers: Record<string, string>;
  /** PATCHes per feature. */
  rounds: number;
  log: (line: string) => void;
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};

/** Runs the rows; the two table rows and one line of facts (the inbox times). */
export async function benchNotifications(input: NotificationBenchInput): Promise<{ rows: Row[]; checks: string[] }> {
  const { sql, base, projectId, slug, headers, rounds, log } = input;
  const [followed, alone] = input.featureIds;
  const prefix = `bench-follower-${projectId}-`;
  await sql`
    INSERT INTO voters (public_id, project_id, kind, display_name)
    SELECT ${prefix} || g, ${projectId}, 'anonymous', 'Follower ' || g FROM generate_series(1, ${FOLLOWERS}) AS g
    ON CONFLICT DO NOTHING`;
  await sql`DELETE FROM subscriptions WHERE feature_id IN (${followed}, ${alone})`;
  await sql`
    INSERT INTO subscriptions (feature_id, voter_id, project_id, reason)
    SELECT ${followed}, id, ${projectId}, 'vote' FROM voters WHERE project_id = ${projectId} AND public_id LIKE ${`${prefix}%`}`;
  const statuses = new Map<number, string>();
  for (const id of [followed, alone]) {
    const [row] = await sql<{ status: string }[]>`SELECT status FROM features WHERE id = ${id}`;
    statuses.set(id, row!.status);
  }
  const patch = async (id: number): Promise<number> => {
    const status = statuses.get(id) === "in_progress" ? "planned" : "in_progress";
    statuses.set(id, status);
    const started = performance.now();
    const response = await fetch(`${base}/api/v3/projects/${slug}/admin/features/${id}`, {
      method: "PATCH",
      headers: { ...headers, "Content-Type": "application/json" },
      body: JSON.stringify({ status }),
    });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`PATCH features/${id} answered ${response.status}`);
    return performance.now() - started;
  };
  const latency = { followed: [] as number[], alone: [] as number[] };
  const inboxMs: number[] = [];
  // The rows before this one (the owner PATCH rows above all) leave the consumer a backlog of
  // events; a change's fan-out is timed from an empty feed, the backlog's drain reported apart.
  const backlog = await drainedFeed(sql);
  try {
    log(`small: ${NOTIFICATION_ROUTES.followed} (${rounds} changes each, alternating) ...`);
    for (let round = 0; round < rounds; round++) {
      latency.followed.push(await patch(followed));
      const answered = performance.now();
      const [event] = await sql<{ seq: string }[]>`
        SELECT max(seq)::text AS seq FROM events
        WHERE project_id = ${projectId} AND type = 'feature.status_changed' AND data->'object'->>'id' = ${String(followed)}`;
      for (;;) {
        const [made] = await sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM notifications WHERE event_seq = ${event!.seq}::bigint AND type = 'status_changed'`;
        if (made!.n >= FOLLOWERS) break;
        if (performance.now() - answered > GIVE_UP_MS) throw new Error(`only ${made!.n} notifications after ${GIVE_UP_MS} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      inboxMs.push(performance.now() - answered);
      latency.alone.push(await patch(alone));
    }
  } finally {
    await sql`DELETE FROM notifications WHERE project_id = ${projectId}`;
    await sql`DELETE FROM subscriptions WHERE feature_id = ${followed}`;
    await sql`DELETE FROM voters WHERE project_id = ${projectId} AND public_id LIKE ${`${prefix}%`}`;
  }
  const row = (route: string, values: number[]): Row => {
    const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
    return {
      route,
      project: "small",
      reqPerSec: 1000 / mean,
      p50: quantile(values, 0.5),
      p99: quantile(values, 0.99),
      bytes: 0,
      non2xx: 0,
      note: "(one at a time)",
    };
  };
  const seconds = inboxMs.map((ms) => (ms / 1000).toFixed(2));
  return {
    rows: [row(NOTIFICATION_ROUTES.followed, latency.followed), row(NOTIFICATION_ROUTES.alone, latency.alone)],
    checks: [
      `notifications: before the first change the consumer worked through ${backlog.events.toLocaleString("en-US")} events left by the rows ` +
        `before (${backlog.notifications.toLocaleString("en-US")} notifications made) in ${(backlog.ms / 1000).toFixed(2)} s`,
      `notifications: the 10,000th notification of a status change was in an inbox ${(quantile(inboxMs, 0.5) / 1000).toFixed(2)} s ` +
        `(median; max ${(Math.max(...inboxMs) / 1000).toFixed(2)} s; each: ${seconds.join(", ")} s) after the PATCH answered; goal < 10 s`,
    ],
  };
}

/**
 * Waits until the server's notification consumer has consumed every event recorded so far (its
 * cursor at the newest event); the events it had left, the notifications it made meanwhile and
 * the wait (ms). Throws after GIVE_UP_MS.
 */
async function drainedFeed(sql: Sql): Promise<{ events: number; notifications: number; ms: number }> {
  const started = performance.now();
  const left = async () => {
    const [row] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM events e, notification_cursor c WHERE c.id = 1 AND (e.txid, e.seq) > (c.txid, c.seq)`;
    return row!.n;
  };
  const notifications = async () => Number((await sql<{ n: string }[]>`SELECT count(*)::text AS n FROM notifications`)[0]!.n);
  const events = await left();
  const made = await notifications();
  while ((await left()) > 0) {
    if (performance.now() - started > GIVE_UP_MS) throw new Error(`the notification consumer still had events left after ${GIVE_UP_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { events, notifications: (await notifications()) - made, ms: performance.now() - started };
}
