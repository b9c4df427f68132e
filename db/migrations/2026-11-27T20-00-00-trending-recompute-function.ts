/**
 * fb_trending_of_votes(feature, except_voter, epoch_seconds, decay_seconds): a feature's
 * trending_score recomputed from the votes it holds (src/lib/rules/trending.ts: ln of the sum of
 * exp(x) with x = (vote time - epoch) / decay), leaving out one voter's vote.
 *
 * A withdrawal recomputes the score when the vote it removes carried nearly all of the sum. It is
 * one statement, whose snapshot is taken before it waits for the feature's row lock, so a
 * subquery there still counts a vote that a concurrent withdrawal deleted and committed
 * meanwhile (or misses one a concurrent cast added). A VOLATILE PL/pgSQL function takes a fresh
 * snapshot for its query, which runs once the lock is held: it counts exactly the votes
 * committed by then.
 * Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE OR REPLACE FUNCTION fb_trending_of_votes(feature int, except_voter int, epoch_seconds float8, decay_seconds float8)
    RETURNS float8 LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      RETURN (SELECT max(v.mx) + ln(sum(exp(v.x - v.mx))) FROM (
        SELECT x, max(x) OVER () AS mx FROM (
          SELECT (extract(epoch FROM created_at) - epoch_seconds) / decay_seconds AS x
          FROM votes WHERE feature_id = feature AND voter_id <> except_voter) votes_x) v);
    END $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION IF EXISTS fb_trending_of_votes(int, int, float8, float8)`.execute(db);
}
