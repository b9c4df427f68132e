/**
 * projects.voter_count (voters with at least one vote) moves into `project_voter_counts`: the
 * count split over VOTER_COUNT_SHARDS rows per project, a voter counting in shard
 * voter_id % 16; the project's count is their sum. Why: a voter's first vote and last
 * withdrawal moved the one projects row, whose lock is held until the vote commits, so every
 * first vote of a project queued behind the others. Measured with pgbench on copies of the
 * bench's large project (8 clients; the API's vote and withdraw statements; voters casting their
 * first vote, so each cycle moves the count twice): 549-598 cycles/s on the single row,
 * 1,108-1,221 with 16 shard rows, as fast as voters who already had votes (1,111-1,150).
 * Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

const statements = [
  `CREATE TABLE project_voter_counts (
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    shard smallint NOT NULL CHECK (shard >= 0 AND shard < 16),
    voter_count integer NOT NULL CHECK (voter_count >= 0),
    PRIMARY KEY (project_id, shard)
  )`,
  `INSERT INTO project_voter_counts (project_id, shard, voter_count)
    SELECT project_id, voter_id % 16, count(DISTINCT voter_id)::int FROM votes GROUP BY 1, 2`,
  `ALTER TABLE projects DROP COLUMN voter_count`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const statement of [
    `ALTER TABLE projects ADD COLUMN voter_count integer NOT NULL DEFAULT 0 CHECK (voter_count >= 0)`,
    `UPDATE projects p SET voter_count = s.n FROM (
      SELECT project_id, sum(voter_count)::int AS n FROM project_voter_counts GROUP BY project_id) s
    WHERE p.id = s.project_id`,
    `DROP TABLE IF EXISTS project_voter_counts`,
  ])
    await sql.raw(statement).execute(db);
}
