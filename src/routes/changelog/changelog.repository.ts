/**
 * Release queries (contract, ReleaseObject). A release is public once published_at is set and
 * not in the future; drafts (published_at null) are never public.
 */
import { type ExpressionBuilder, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { Database, ProjectSettings, ReleaseFeaturesTable } from "../../../db/schema.ts";
import { publiclyListed } from "../features/index.ts";

export interface ReleaseRow {
  id: number;
  name: string;
  slug: string;
  body: string | null;
  body_html: string | null;
  is_featured: boolean;
  published_at: Date | null;
  view_count: number;
}

export interface ReleaseFeatureRow {
  release_id: number;
  id: number;
  heading: string;
  status: string;
  changelog_type: ReleaseFeaturesTable["changelog_type"];
}

const releaseColumns = ["id", "name", "slug", "body", "body_html", "is_featured", "published_at", "view_count"] as const;

/** WHERE: the project's release, published at or before `now`. */
function published(projectId: number, now: Date) {
  return (eb: ExpressionBuilder<Database, "releases">) =>
    eb.and([
      eb("releases.project_id", "=", projectId),
      eb("releases.published_at", "is not", null),
      eb("releases.published_at", "<=", now),
    ]);
}

/** Number of published releases of the project (for Meta.total). */
export async function countPublishedReleases(db: Db, projectId: number, now: Date): Promise<number> {
  const row = await db
    .selectFrom("releases")
    .select(sql<number>`count(*)::int`.as("total"))
    .where(published(projectId, now))
    .executeTakeFirstOrThrow();
  return row.total;
}

/** A page of published releases: featured first, then published_at desc, then id desc. */
export async function listPublishedReleases(
  db: Db,
  projectId: number,
  now: Date,
  window: { limit: number; offset: number },
): Promise<ReleaseRow[]> {
  return db
    .selectFrom("releases")
    .select([...releaseColumns])
    .where(published(projectId, now))
    .orderBy("is_featured", "desc")
    .orderBy("published_at", "desc")
    .orderBy("id", "desc")
    .limit(window.limit)
    .offset(window.offset)
    .execute();
}

/** The published release `id` of the project; undefined for a draft, a future or foreign one. */
export async function findPublishedRelease(db: Db, projectId: number, id: number, now: Date): Promise<ReleaseRow | undefined> {
  return db
    .selectFrom("releases")
    .select([...releaseColumns])
    .where("id", "=", id)
    .where(published(projectId, now))
    .executeTakeFirst();
}

/**
 * The publicly listed features of every release in `releaseIds`, in one query, ordered by
 * release then release_features.position (the owner's order in the note).
 */
export async function listReleaseFeatures(
  db: Db,
  project: { id: number; settings: ProjectSettings },
  releaseIds: number[],
): Promise<ReleaseFeatureRow[]> {
  if (releaseIds.length === 0) return [];
  return db
    .selectFrom("release_features")
    .innerJoin("features", "features.id", "release_features.feature_id")
    .select(["release_features.release_id", "features.id", "features.heading", "features.status", "release_features.changelog_type"])
    .where("release_features.release_id", "in", releaseIds)
    .where("features.project_id", "=", project.id)
    .where(publiclyListed(project.settings))
    .orderBy("release_features.release_id")
    .orderBy("release_features.position")
    .orderBy("features.id")
    .execute();
}
