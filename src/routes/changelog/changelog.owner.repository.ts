/**
 * Release reads and writes of the owner routes (owner-api-v3.md, Routes /releases; Rule 4).
 * Every function takes a `db | trx`; the handlers run each write in one transaction.
 */

import type { Insertable, Updateable } from "kysely";
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { ReleasesTable } from "../../../db/schema.ts";
import type { ReleaseFeatureRow, ReleaseRow } from "./changelog.repository.ts";

const releaseColumns = ["id", "name", "slug", "body", "body_html", "is_featured", "published_at", "view_count"] as const;

/** A page of every release of the project, newest first (id descending). */
export async function listAllReleases(db: Db, projectId: number, window: { limit: number; offset: number }): Promise<ReleaseRow[]> {
  return db
    .selectFrom("releases")
    .select([...releaseColumns])
    .where("project_id", "=", projectId)
    .orderBy("id", "desc")
    .limit(window.limit)
    .offset(window.offset)
    .execute();
}

export async function countReleases(db: Db, projectId: number): Promise<number> {
  const row = await db
    .selectFrom("releases")
    .select(sql<number>`count(*)::int`.as("n"))
    .where("project_id", "=", projectId)
    .executeTakeFirstOrThrow();
  return row.n;
}

/** The release `id` of the project in any state, or undefined. */
export async function findRelease(db: Db, projectId: number, id: number): Promise<ReleaseRow | undefined> {
  return db
    .selectFrom("releases")
    .select([...releaseColumns])
    .where("id", "=", id)
    .where("project_id", "=", projectId)
    .executeTakeFirst();
}

/** Every feature of the releases in `releaseIds`, public or not, by release then the release's order. */
export async function listAllReleaseFeatures(db: Db, releaseIds: number[]): Promise<ReleaseFeatureRow[]> {
  if (releaseIds.length === 0) return [];
  return db
    .selectFrom("release_features")
    .innerJoin("features", "features.id", "release_features.feature_id")
    .select(["release_features.release_id", "features.id", "features.heading", "features.status", "release_features.changelog_type"])
    .where("release_features.release_id", "in", releaseIds)
    .orderBy("release_features.release_id")
    .orderBy("release_features.position")
    .orderBy("features.id")
    .execute();
}

/** Id of another release of the project with `slug`, or undefined. */
export async function findReleaseBySlug(db: Db, projectId: number, slug: string, exceptId?: number): Promise<number | undefined> {
  let query = db.selectFrom("releases").select("id").where("project_id", "=", projectId).where("slug", "=", slug);
  if (exceptId !== undefined) query = query.where("id", "<>", exceptId);
  return (await query.executeTakeFirst())?.id;
}

/** Of `featureIds`, those that are features of the project. */
export async function existingFeatureIds(db: Db, projectId: number, featureIds: number[]): Promise<Set<number>> {
  if (featureIds.length === 0) return new Set();
  const rows = await db.selectFrom("features").select("id").where("project_id", "=", projectId).where("id", "in", featureIds).execute();
  return new Set(rows.map((row) => row.id));
}

export async function insertRelease(db: Db, values: Insertable<ReleasesTable>): Promise<number> {
  const row = await db.insertInto("releases").values(values).returning("id").executeTakeFirstOrThrow();
  return row.id;
}

export async function updateRelease(db: Db, id: number, values: Updateable<ReleasesTable>): Promise<void> {
  if (Object.keys(values).length === 0) return;
  await db.updateTable("releases").set(values).where("id", "=", id).execute();
}

/** Replaces the release's feature list; positions follow the given order. */
export async function replaceReleaseFeatures(
  db: Db,
  releaseId: number,
  features: { feature_id: number; changelog_type: "new" | "improvement" | "fix" | "security" | "breaking_change" }[],
): Promise<void> {
  await db.deleteFrom("release_features").where("release_id", "=", releaseId).execute();
  if (features.length === 0) return;
  await db
    .insertInto("release_features")
    .values(
      features.map((f, position) => ({ release_id: releaseId, feature_id: f.feature_id, changelog_type: f.changelog_type, position })),
    )
    .execute();
}

/** Deletes the release and its feature links (ON DELETE CASCADE). False when absent. */
export async function deleteRelease(db: Db, projectId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom("releases").where("id", "=", id).where("project_id", "=", projectId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
