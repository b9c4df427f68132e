/**
 * Migrations that move stored data: db/migrations/2026-11-23T01-00-00-project-voter-count-shards
 * counts each project's voters with votes into their shard rows (voter_id % 16) and drops
 * projects.voter_count; its down migration puts the sum back. Run on a fresh embedded database
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
