/**
 * Which features the public routes may show (contract, "States and transitions" and
 * BoardDocument.display): a suggestion awaiting review (status open, is_approved false) is
 * listed to nobody and shown by id only to its author; denied features vanish when show_denied
 * is false and archived ones when show_archived is false. Every route that reads, votes on or
 * comments on a feature goes through these two functions so that the rules live in one place.
 */
import { type ExpressionBuilder, type QueryCreator, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { Database, ProjectSettings } from "../../../db/schema.ts";

type FeatureScope = ExpressionBuilder<Database, "features">;

/** WHERE condition: the feature appears in public listings of a project with these settings. */
export function publiclyListed(settings: ProjectSettings) {
  return (eb: FeatureScope) => {
    const conditions = [eb.or([eb("features.is_approved", "=", true), eb("features.status", "<>", "open")])];
    if (!settings.show_denied) conditions.push(eb("features.status", "<>", "denied"));
    if (!settings.show_archived) conditions.push(eb("features.status", "<>", "archived"));
    return eb.and(conditions);
  };
}

/** WHERE condition: listed publicly, or written by this voter (who may see it by id). */
export function visibleTo(settings: ProjectSettings, voterId: number | null) {
  return (eb: FeatureScope) =>
    voterId === null ? publiclyListed(settings)(eb) : eb.or([publiclyListed(settings)(eb), eb("features.author_voter_id", "=", voterId)]);
}

export interface VisibleFeature {
  id: number;
  board_id: number;
  column_id: number | null;
  status: string;
  /** Whether a vote would be accepted: the column takes votes and the project allows voting. */
  is_votable: boolean;
}

/** What a visibility check needs: ids and settings, each possibly a query-template parameter. */
export interface VisibilityCheck {
  projectId: number;
  featureId: number;
  voterId: number | null;
  allowVoting: boolean;
}

/**
 * The select behind findVisibleFeature: one row (VisibleFeature) when the voter may see the
 * feature. The vote statements embed it as their first step; its structure depends only on
 * `settings.show_denied` / `show_archived` and on whether `voterId` is null.
 */
export function visibleFeatureQuery(db: QueryCreator<Database>, settings: ProjectSettings, check: VisibilityCheck) {
  return db
    .selectFrom("features")
    .leftJoin("columns", "columns.id", "features.column_id")
    .select([
      "features.id",
      "features.board_id",
      "features.column_id",
      "features.status",
      sql<boolean>`coalesce(${sql.ref("columns.is_votable")}, false) AND ${check.allowVoting}`.as("is_votable"),
    ])
    .where("features.id", "=", check.featureId)
    .where("features.project_id", "=", check.projectId)
    .where(visibleTo(settings, check.voterId));
}

/**
 * Cache key of what shapes visibleFeatureQuery for a voter (see db/query-template.ts): the
 * settings that add conditions. Keep in step with publiclyListed.
 */
export function visibilityShapeKey(settings: ProjectSettings): string {
  return `denied:${settings.show_denied},archived:${settings.show_archived}`;
}

/**
 * The feature `featureId` of the project if the voter may see it, with whether it takes
 * votes; undefined when it does not exist, belongs to another project, or is hidden.
 */
export async function findVisibleFeature(
  db: Db,
  project: { id: number; settings: ProjectSettings },
  featureId: number,
  voterId: number | null,
): Promise<VisibleFeature | undefined> {
  return visibleFeatureQuery(db, project.settings, {
    projectId: project.id,
    featureId,
    voterId,
    allowVoting: project.settings.allow_voting,
  }).executeTakeFirst();
}

/** The settings with every show_* on: what the owner's objects are computed under. */
export function everythingShown(settings: ProjectSettings): ProjectSettings {
  return {
    ...settings,
    show_archived: true,
    show_comments: true,
    show_denied: true,
    show_progress: true,
    show_views: true,
    show_votes: true,
  };
}
