/**
 * Stored revenue aggregates for GET /projects/{slug}/revenue/features (README, "Revenue
 * reporting"): feature_tier_votes holds, per (feature, tier), what the feature's voters of that
 * tier add up to, so the report reads a few rows per feature instead of every vote.
 *
 * Only voter-side facts are stored (how many voters of the tier voted, how many churned, how
 * many pay the tier amount, the sum of the overrides of those who pay an override); the tier's
 * own mrr_cents and multiplier are joined at read time, so changing a tier rewrites nothing.
 * Kept exact by triggers, in the same transaction as the change that moves them:
 * - votes, AFTER INSERT / AFTER DELETE, per statement over the transition table: one aggregated
 *   upsert per statement, so a bulk insert (snapshot import) costs one set-based step per
 *   chunk, not one call per row. Votes are never updated.
 * - voters, AFTER UPDATE OF tier_id, mrr_override_cents, churned (only when one of them really
 *   changes): the voter's contribution moves on every feature they voted for.
 * - voters, BEFORE DELETE: the voter's contribution leaves first, because the votes cascaded
 *   from a voter's deletion no longer see the voter's tier.
 * Deleting a feature or a tier removes its rows by cascade. Nested deletions (pg_trigger_depth()
 * > 1: foreign-key cascades from a project, feature or voter deletion) skip the work, since the
 * rows they would fix go with the cascade; likewise the SET NULL on voters when a tier is deleted.
 * Loads that bypass triggers (session_replication_role = replica) call
 * rebuild_feature_tier_votes(project_id) afterwards. Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

/** The per-voter contribution in the bucket of one tier, as the four stored columns. */
const contribution = (voter: string) => `1, (${voter}.churned)::int,
      (NOT ${voter}.churned AND ${voter}.mrr_override_cents IS NULL)::int,
      CASE WHEN ${voter}.churned THEN 0 ELSE coalesce(${voter}.mrr_override_cents, 0) END::bigint`;

const aggregate = `count(*)::int, (count(*) FILTER (WHERE vr.churned))::int,
      (count(*) FILTER (WHERE NOT vr.churned AND vr.mrr_override_cents IS NULL))::int,
      coalesce(sum(vr.mrr_override_cents) FILTER (WHERE NOT vr.churned), 0)::bigint`;

const addOnConflict = `ON CONFLICT (feature_id, tier_id) DO UPDATE SET
      votes = ftv.votes + EXCLUDED.votes, churned = ftv.churned + EXCLUDED.churned,
      billed = ftv.billed + EXCLUDED.billed, override_cents = ftv.override_cents + EXCLUDED.override_cents`;

const statements = [
  `CREATE TABLE feature_tier_votes (
    feature_id integer NOT NULL REFERENCES features(id) ON DELETE CASCADE,
    tier_id integer NOT NULL REFERENCES tiers(id) ON DELETE CASCADE,
    project_id integer NOT NULL,
    votes integer NOT NULL DEFAULT 0,
    churned integer NOT NULL DEFAULT 0,
    billed integer NOT NULL DEFAULT 0,
    override_cents bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (feature_id, tier_id)
  )`,
  `CREATE INDEX feature_tier_votes_project_idx ON feature_tier_votes (project_id, feature_id)`,
  `CREATE INDEX feature_tier_votes_tier_idx ON feature_tier_votes (tier_id)`,

  `CREATE FUNCTION rebuild_feature_tier_votes(p_project integer) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    DELETE FROM feature_tier_votes WHERE project_id = p_project;
    INSERT INTO feature_tier_votes (feature_id, tier_id, project_id, votes, churned, billed, override_cents)
    SELECT v.feature_id, vr.tier_id, p_project, ${aggregate}
    FROM votes v JOIN voters vr ON vr.id = v.voter_id
    WHERE v.project_id = p_project AND vr.tier_id IS NOT NULL
    GROUP BY v.feature_id, vr.tier_id;
  END $$`,

  `CREATE FUNCTION feature_tier_votes_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO feature_tier_votes AS ftv (feature_id, tier_id, project_id, votes, churned, billed, override_cents)
    SELECT v.feature_id, vr.tier_id, v.project_id, ${aggregate}
    FROM added v JOIN voters vr ON vr.id = v.voter_id
    WHERE vr.tier_id IS NOT NULL
    GROUP BY v.feature_id, vr.tier_id, v.project_id
    ${addOnConflict};
    RETURN NULL;
  END $$`,

  `CREATE FUNCTION feature_tier_votes_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF pg_trigger_depth() > 1 THEN RETURN NULL; END IF;
    UPDATE feature_tier_votes AS ftv SET votes = ftv.votes - s.votes, churned = ftv.churned - s.churned,
      billed = ftv.billed - s.billed, override_cents = ftv.override_cents - s.override_cents
    FROM (
      SELECT v.feature_id, vr.tier_id, ${aggregate}
      FROM removed v JOIN voters vr ON vr.id = v.voter_id
      WHERE vr.tier_id IS NOT NULL
      GROUP BY v.feature_id, vr.tier_id
    ) AS s (feature_id, tier_id, votes, churned, billed, override_cents)
    WHERE ftv.feature_id = s.feature_id AND ftv.tier_id = s.tier_id;
    RETURN NULL;
  END $$`,

  `CREATE FUNCTION feature_tier_votes_on_voter_update() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    -- A nested SET NULL comes from a tier's deletion, whose rows are removed by cascade.
    IF pg_trigger_depth() > 1 AND NEW.tier_id IS NULL THEN RETURN NULL; END IF;
    IF OLD.tier_id IS NOT NULL THEN
      UPDATE feature_tier_votes AS ftv SET votes = ftv.votes - 1, churned = ftv.churned - (OLD.churned)::int,
        billed = ftv.billed - (NOT OLD.churned AND OLD.mrr_override_cents IS NULL)::int,
        override_cents = ftv.override_cents - CASE WHEN OLD.churned THEN 0 ELSE coalesce(OLD.mrr_override_cents, 0) END
      FROM votes v
      WHERE v.voter_id = OLD.id AND ftv.feature_id = v.feature_id AND ftv.tier_id = OLD.tier_id;
    END IF;
    IF NEW.tier_id IS NOT NULL THEN
      INSERT INTO feature_tier_votes AS ftv (feature_id, tier_id, project_id, votes, churned, billed, override_cents)
      SELECT v.feature_id, NEW.tier_id, v.project_id, ${contribution("NEW")}
      FROM votes v WHERE v.voter_id = NEW.id
      ${addOnConflict};
    END IF;
    RETURN NULL;
  END $$`,

  `CREATE FUNCTION feature_tier_votes_on_voter_delete() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF pg_trigger_depth() = 1 THEN
      UPDATE feature_tier_votes AS ftv SET votes = ftv.votes - 1, churned = ftv.churned - (OLD.churned)::int,
        billed = ftv.billed - (NOT OLD.churned AND OLD.mrr_override_cents IS NULL)::int,
        override_cents = ftv.override_cents - CASE WHEN OLD.churned THEN 0 ELSE coalesce(OLD.mrr_override_cents, 0) END
      FROM votes v
      WHERE v.voter_id = OLD.id AND ftv.feature_id = v.feature_id AND ftv.tier_id = OLD.tier_id;
    END IF;
    RETURN OLD;
  END $$`,

  `CREATE TRIGGER votes_feature_tier_votes_insert AFTER INSERT ON votes
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION feature_tier_votes_on_insert()`,
  `CREATE TRIGGER votes_feature_tier_votes_delete AFTER DELETE ON votes
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION feature_tier_votes_on_delete()`,
  `CREATE TRIGGER voters_feature_tier_votes_update AFTER UPDATE OF tier_id, mrr_override_cents, churned ON voters
    FOR EACH ROW WHEN (OLD.tier_id IS DISTINCT FROM NEW.tier_id
      OR OLD.mrr_override_cents IS DISTINCT FROM NEW.mrr_override_cents OR OLD.churned IS DISTINCT FROM NEW.churned)
    EXECUTE FUNCTION feature_tier_votes_on_voter_update()`,
  `CREATE TRIGGER voters_feature_tier_votes_delete BEFORE DELETE ON voters
    FOR EACH ROW WHEN (OLD.tier_id IS NOT NULL) EXECUTE FUNCTION feature_tier_votes_on_voter_delete()`,

  // Backfill every existing project.
  `SELECT rebuild_feature_tier_votes(id) FROM projects`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const statement of [
    "DROP TRIGGER IF EXISTS votes_feature_tier_votes_insert ON votes",
    "DROP TRIGGER IF EXISTS votes_feature_tier_votes_delete ON votes",
    "DROP TRIGGER IF EXISTS voters_feature_tier_votes_update ON voters",
    "DROP TRIGGER IF EXISTS voters_feature_tier_votes_delete ON voters",
    "DROP FUNCTION IF EXISTS feature_tier_votes_on_insert()",
    "DROP FUNCTION IF EXISTS feature_tier_votes_on_delete()",
    "DROP FUNCTION IF EXISTS feature_tier_votes_on_voter_update()",
    "DROP FUNCTION IF EXISTS feature_tier_votes_on_voter_delete()",
    "DROP FUNCTION IF EXISTS rebuild_feature_tier_votes(integer)",
    "DROP TABLE IF EXISTS feature_tier_votes",
  ])
    await sql.raw(statement).execute(db);
}
