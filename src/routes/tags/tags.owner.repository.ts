/**
 * Tag queries of the owner routes (owner-api-v3.md, TagObject; Routes /tags). Every write takes
 * a `db | trx` so that it joins the request's one transaction.
 */
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";

export interface TagRow {
  id: number;
  name: string;
  feature_count: number;
}

function tagsWithCounts(db: Db, projectId: number) {
  return db
    .selectFrom("tags")
    .select((eb) => [
      "tags.id",
      "tags.name",
      eb
        .selectFrom("feature_tags")
        .select(sql<number>`count(*)::int`.as("n"))
        .whereRef("feature_tags.tag_id", "=", "tags.id")
        .as("feature_count"),
    ])
    .where("tags.project_id", "=", projectId);
}

/** A page of the project's tags with feature counts, by name (case-insensitive, "C" order) then id. */
export async function listTagsPage(db: Db, projectId: number, window: { limit: number; offset: number }): Promise<TagRow[]> {
  const rows = await tagsWithCounts(db, projectId)
    .orderBy(sql`lower(tags.name) COLLATE "C"`)
    .orderBy(sql`tags.name COLLATE "C"`)
    .orderBy("tags.id")
    .limit(window.limit)
    .offset(window.offset)
    .execute();
  return rows.map((row) => ({ ...row, feature_count: Number(row.feature_count ?? 0) }));
}

export async function countTags(db: Db, projectId: number): Promise<number> {
  const row = await db
    .selectFrom("tags")
    .select(sql<number>`count(*)::int`.as("n"))
    .where("project_id", "=", projectId)
    .executeTakeFirstOrThrow();
  return row.n;
}

/** The tag `id` of the project with its feature count, or undefined. */
export async function findTag(db: Db, projectId: number, id: number): Promise<TagRow | undefined> {
  const row = await tagsWithCounts(db, projectId).where("tags.id", "=", id).executeTakeFirst();
  return row && { ...row, feature_count: Number(row.feature_count ?? 0) };
}

/** Id of another tag of the project whose name equals `name` ignoring case, or undefined. */
export async function findTagByName(db: Db, projectId: number, name: string, exceptId?: number): Promise<number | undefined> {
  let query = db.selectFrom("tags").select("id").where("project_id", "=", projectId).where(sql`lower(name)`, "=", name.toLowerCase());
  if (exceptId !== undefined) query = query.where("id", "<>", exceptId);
  return (await query.executeTakeFirst())?.id;
}

export async function insertTag(db: Db, projectId: number, name: string): Promise<number> {
  const row = await db.insertInto("tags").values({ project_id: projectId, name }).returning("id").executeTakeFirstOrThrow();
  return row.id;
}

export async function renameTag(db: Db, projectId: number, id: number, name: string): Promise<void> {
  await db.updateTable("tags").set({ name }).where("id", "=", id).where("project_id", "=", projectId).execute();
}

/** Deletes the tag; its feature_tags rows go with it (ON DELETE CASCADE). False when absent. */
export async function deleteTag(db: Db, projectId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom("tags").where("id", "=", id).where("project_id", "=", projectId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
