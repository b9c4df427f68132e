/**
 * Feature merges (owner-api-v3.md, Rule 2): what each merge did, so that an unmerge is exact.
 * `feature_merges` holds one row per merged duplicate (source) while it stays merged: its target
 * and the source's status, column and linked_feature before the merge. `feature_merge_votes`
 * holds every vote the source had then: `moved` (the voter had no vote on the target; the vote
 * now sits on the target with its weight and cast time) or `duplicate` (the voter had both; the
 * source's vote was dropped, and when it was the earlier one the target's vote took its weight and
 * time: the target's own values are kept in target_weight / target_created_at).
 * Deleting either feature, or a voter, removes what refers to it (the merge can no longer be
 * undone exactly, so it is forgotten). Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

const statements = [
  `CREATE TABLE feature_merges (
    id serial PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    source_id integer NOT NULL UNIQUE REFERENCES features(id) ON DELETE CASCADE,
    target_id integer NOT NULL REFERENCES features(id) ON DELETE CASCADE,
    previous_status text NOT NULL,
    previous_column_id integer REFERENCES columns(id) ON DELETE SET NULL,
    previous_linked_feature_id integer REFERENCES features(id) ON DELETE SET NULL,
    linked_set_by_merge boolean NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (source_id <> target_id)
  )`,
  `CREATE INDEX feature_merges_target_idx ON feature_merges (target_id)`,
  `CREATE TABLE feature_merge_votes (
    merge_id integer NOT NULL REFERENCES feature_merges(id) ON DELETE CASCADE,
    voter_id integer NOT NULL REFERENCES voters(id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('moved', 'duplicate')),
    weight integer NOT NULL,
    created_at timestamptz NOT NULL,
    target_weight integer,
    target_created_at timestamptz,
    PRIMARY KEY (merge_id, voter_id)
  )`,
  `CREATE INDEX feature_merge_votes_voter_idx ON feature_merge_votes (voter_id)`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw("DROP TABLE IF EXISTS feature_merge_votes").execute(db);
  await sql.raw("DROP TABLE IF EXISTS feature_merges").execute(db);
}
