/**
 * Migrations that move stored data: db/migrations/2026-11-23T01-00-00-project-voter-count-shards
 * counts each project's voters with votes into their shard rows (voter_id % 16) and drops
 * projects.voter_count; its down migration puts the sum back. 2026-11-24T20-00-00-erasure-scrub
 * traces stored events to the voter they are about and gives deliveries their event's seq in
 * place of a stored body. Run on a fresh embedded database
 * migrated to the step before, with rows written in that older schema.
 */
import { Migrator, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, openDatabase } from "../db/connect.ts";
import { migrations } from "../db/migrations/index.ts";

const BEFORE_SHARDS = "2026-11-23T00-00-00-feature-search-table";
const SHARDS = "2026-11-23T01-00-00-project-voter-count-shards";

let handle: DatabaseHandle;
let migrator: Migrator;

beforeAll(async () => {
  handle = await openDatabase({ PGLITE_DIR: "memory://" });
  migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations } });
  const { error } = await migrator.migrateTo(BEFORE_SHARDS);
  if (error) throw error;
});
afterAll(() => handle.close());

/** A project with `voters` voters; voter i votes on the first votesOf(i) of three features. */
async function seed(slug: string, voters: number, votesOf: (i: number) => number): Promise<number> {
  const db = handle.db;
  const {
    rows: [project],
  } = await sql<{ id: number }>`INSERT INTO projects (slug, name, settings, theme, voter_count)
    VALUES (${slug}, ${slug}, '{}', '{}', 0) RETURNING id`.execute(db);
  const projectId = project!.id;
  const {
    rows: [board],
  } = await sql<{ id: number }>`INSERT INTO boards (project_id, kind, name, slug)
    VALUES (${projectId}, 'roadmap', 'Roadmap', 'roadmap') RETURNING id`.execute(db);
  const { rows: features } = await sql<{ id: number }>`INSERT INTO features (project_id, board_id, status, heading)
    SELECT ${projectId}, ${board!.id}, 'open', 'f' || g FROM generate_series(1, 3) g RETURNING id`.execute(db);
  for (let i = 0; i < voters; i++) {
    const {
      rows: [voter],
    } = await sql<{ id: number }>`INSERT INTO voters (public_id, project_id, kind, display_name)
      VALUES (${`v_${slug}_${i}`}, ${projectId}, 'anonymous', ${`voter ${i}`}) RETURNING id`.execute(db);
    for (const feature of features.slice(0, votesOf(i))) {
      await sql`INSERT INTO votes (feature_id, voter_id, project_id) VALUES (${feature.id}, ${voter!.id}, ${projectId})`.execute(db);
    }
  }
  return projectId;
}

describe("project voter count shards migration", () => {
  it("counts every voter with votes once, in shard voter_id % 16, and the down migration restores the column", async () => {
    // 40 voters over both projects' ids: every shard is used, some voters have no vote, some several.
    const first = await seed("shards-a", 40, (i) => i % 4);
    const second = await seed("shards-b", 5, () => 1);
    const { error } = await migrator.migrateTo(SHARDS);
    expect(error).toBeUndefined();

    const { rows: shards } = await sql<{ project_id: number; shard: number; voter_count: number }>`
      SELECT project_id, shard, voter_count FROM project_voter_counts ORDER BY project_id, shard`.execute(handle.db);
    const { rows: expected } = await sql<{ project_id: number; shard: number; voter_count: number }>`
      SELECT v.project_id, (v.id % 16)::smallint AS shard, count(*)::int AS voter_count FROM voters v
      WHERE EXISTS (SELECT 1 FROM votes WHERE voter_id = v.id) GROUP BY 1, 2 ORDER BY 1, 2`.execute(handle.db);
    expect(shards).toEqual(expected);
    const total = (projectId: number) => shards.filter((s) => s.project_id === projectId).reduce((sum, s) => sum + s.voter_count, 0);
    expect([total(first), total(second)]).toEqual([30, 5]);
    const { rows: columns } = await sql`SELECT 1 FROM information_schema.columns
      WHERE table_name = 'projects' AND column_name = 'voter_count'`.execute(handle.db);
    expect(columns).toHaveLength(0);

    const down = await migrator.migrateTo(BEFORE_SHARDS);
    expect(down.error).toBeUndefined();
    const { rows: restored } = await sql<{ id: number; voter_count: number }>`
      SELECT id, voter_count FROM projects ORDER BY id`.execute(handle.db);
    expect(restored).toEqual([
      { id: first, voter_count: 30 },
      { id: second, voter_count: 5 },
    ]);
  });
});

describe("erasure scrub migration", () => {
  const BEFORE_SCRUB = "2026-11-23T12-30-00-billing-sync";
  const SCRUB = "2026-11-24T20-00-00-erasure-scrub";

  it("traces voter and comment events to their voter, gives deliveries their event's seq and drops the bodies", async () => {
    const db = handle.db;
    expect((await migrator.migrateTo(BEFORE_SCRUB)).error).toBeUndefined();
    const {
      rows: [project],
    } = await sql<{ id: number }>`INSERT INTO projects (slug, name, settings, theme)
      VALUES ('scrub', 'scrub', '{}', '{}') RETURNING id`.execute(db);
    const projectId = project!.id;
    const {
      rows: [board],
    } = await sql<{ id: number }>`INSERT INTO boards (project_id, kind, name, slug)
      VALUES (${projectId}, 'roadmap', 'Roadmap', 'roadmap') RETURNING id`.execute(db);
    await sql`INSERT INTO features (project_id, board_id, status, heading) VALUES (${projectId}, ${board!.id}, 'open', 'f')`.execute(db);
    await sql`INSERT INTO voters (public_id, project_id, kind, display_name)
      VALUES ('v_scrub_ada', ${projectId}, 'anonymous', 'Ada'), ('v_scrub_bob', ${projectId}, 'anonymous', 'Bob')`.execute(db);
    const { rows: voters } = await sql<{ id: number; public_id: string }>`
      SELECT id, public_id FROM voters WHERE project_id = ${projectId} ORDER BY id`.execute(db);
    const [ada, bob] = voters as [{ id: number; public_id: string }, { id: number; public_id: string }];
    const { rows: features } = await sql<{ id: number }>`SELECT id FROM features WHERE project_id = ${projectId} LIMIT 1`.execute(db);
    const {
      rows: [comment],
    } = await sql<{ id: number }>`INSERT INTO comments (project_id, feature_id, voter_id, content)
      VALUES (${projectId}, ${features[0]!.id}, ${bob.id}, 'Hi') RETURNING id`.execute(db);
    const event = (type: string, object: unknown) =>
      sql<{ seq: string }>`INSERT INTO events (project_id, type, data)
        VALUES (${projectId}, ${type}, ${JSON.stringify({ object, changes: null })}::jsonb) RETURNING seq::text AS seq`.execute(db);
    const banned = (await event("voter.banned", { voter_id: ada.public_id, email: "a@example.com" })).rows[0]!.seq;
    const commented = (await event("comment.created", { id: comment!.id, content: "Hi" })).rows[0]!.seq;
    const voted = (await event("vote.created", { voter_id: ada.public_id, feature_id: features[0]!.id })).rows[0]!.seq;
    const {
      rows: [webhook],
    } = await sql<{ id: number }>`INSERT INTO webhooks (project_id, url, secret)
      VALUES (${projectId}, 'https://hooks.example/x', 'whsec_x') RETURNING id`.execute(db);
    const { eventId } = await import("../src/events/outbox.ts");
    const { rows: positions } = await sql<{ txid: string; seq: string }>`
      SELECT txid::text AS txid, seq::text AS seq FROM events WHERE project_id = ${projectId} ORDER BY seq`.execute(db);
    for (const position of positions) {
      await sql`INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, body)
        VALUES (${webhook!.id}, ${eventId(position.txid, position.seq)}, 'x', '{"secret":"data"}')`.execute(db);
    }
    await sql`INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, body)
      VALUES (${webhook!.id}, 'msg_0123456789abcdefghjkmnpqrs', 'ping', '{}')`.execute(db);

    expect((await migrator.migrateTo(SCRUB)).error).toBeUndefined();
    const { rows: subjects } = await sql<{ seq: string; subject_voter_id: number | null }>`
      SELECT seq::text AS seq, subject_voter_id FROM events WHERE project_id = ${projectId} ORDER BY seq`.execute(db);
    expect(subjects).toEqual([
      { seq: banned, subject_voter_id: ada.id },
      { seq: commented, subject_voter_id: bob.id },
      { seq: voted, subject_voter_id: null },
    ]);
    const { rows: deliveries } = await sql<{ event_type: string; event_seq: string | null }>`
      SELECT event_type, event_seq::text AS event_seq FROM webhook_deliveries WHERE webhook_id = ${webhook!.id} ORDER BY id`.execute(db);
    expect(deliveries).toEqual([
      { event_type: "x", event_seq: banned },
      { event_type: "x", event_seq: commented },
      { event_type: "x", event_seq: voted },
      { event_type: "ping", event_seq: null },
    ]);
    const { rows: bodyColumn } = await sql`SELECT 1 FROM information_schema.columns
      WHERE table_name = 'webhook_deliveries' AND column_name = 'body'`.execute(db);
    expect(bodyColumn).toHaveLength(0);
    expect((await migrator.migrateTo(BEFORE_SCRUB)).error).toBeUndefined();
  });
});
