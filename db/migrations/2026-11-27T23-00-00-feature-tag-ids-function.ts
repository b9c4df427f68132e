/**
 * fb_feature_tag_ids(feature): the ids of a feature's tags, ascending ('{}' for none), as
 * committed when it runs.
 *
 * A vote records which listings can show its feature (src/lib/data/read-dependencies.ts), its
 * tags among them. Tags are added to an existing feature only by an owner edit holding the
 * feature's row lock; a vote statement that waited for that lock took its snapshot before the
 * edit committed, so a subquery there would miss the new tag and keep a cached tag listing the
 * vote changed. A VOLATILE PL/pgSQL function takes a fresh snapshot for its query, which runs
 * once the vote holds the lock (as fb_trending_of_votes does).
 * Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE OR REPLACE FUNCTION fb_feature_tag_ids(feature int)
    RETURNS int[] LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      RETURN (SELECT coalesce(array_agg(tag_id ORDER BY tag_id), '{}') FROM feature_tags WHERE feature_id = feature);
    END $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION IF EXISTS fb_feature_tag_ids(int)`.execute(db);
}
