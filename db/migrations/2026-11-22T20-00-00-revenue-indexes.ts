/**
 * Index for the revenue report (GET /projects/{slug}/revenue/features): the sort keys mrr,
 * weighted and priority sum, per feature, over the votes of the project's voters with a tier.
 * votes (project_id, voter_id, feature_id) lets that join read only this project's votes,
 * index-only and in voter order (merge or hash join against the project's voters), instead of
 * scanning every project's votes. Frozen once shipped; add a new migration instead.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS votes_project_voter_idx ON votes (project_id, voter_id, feature_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS votes_project_voter_idx`.execute(db);
}
