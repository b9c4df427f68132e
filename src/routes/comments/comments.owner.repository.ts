/** The owner's comment reads (owner-api-v3.md, GET /comments): every comment, replies as rows. */
import type { Db } from "../../../db/connect.ts";
import type { PageRequest } from "../../lib/http/pagination.ts";
import { pageOffset } from "../../lib/http/pagination.ts";
import { type CommentRow, selectCommentRow } from "./comments.repository.ts";

/**
 * One page of the project's comments, newest first (id breaks ties), top-level comments and
 * replies alike, optionally of one feature and/or one voter (by public id), with the total.
 */
export async function listProjectComments(
  db: Db,
  projectId: number,
  filter: { featureId?: number | undefined; voterPublicId?: string | undefined },
  paging: PageRequest,
): Promise<{ rows: CommentRow[]; total: number }> {
  let rows = selectCommentRow(db.selectFrom("comments"), null).where("comments.project_id", "=", projectId);
  let count = db.selectFrom("comments").innerJoin("voters", "voters.id", "comments.voter_id").where("comments.project_id", "=", projectId);
  if (filter.featureId !== undefined) {
    rows = rows.where("comments.feature_id", "=", filter.featureId);
    count = count.where("comments.feature_id", "=", filter.featureId);
  }
  if (filter.voterPublicId !== undefined) {
    rows = rows.where("voters.public_id", "=", filter.voterPublicId);
    count = count.where("voters.public_id", "=", filter.voterPublicId);
  }
  const [page, counted] = await Promise.all([
    rows.orderBy("comments.created_at", "desc").orderBy("comments.id", "desc").limit(paging.per_page).offset(pageOffset(paging)).execute(),
    count.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
  ]);
  return { rows: page, total: Number(counted.total) };
}

/** The project's voter with public id `publicId` if its role is owner or editor. */
export async function findStaffVoter(db: Db, projectId: number, publicId: string): Promise<{ id: number } | undefined> {
  return db
    .selectFrom("voters")
    .select("id")
    .where("project_id", "=", projectId)
    .where("public_id", "=", publicId)
    .where("role", "in", ["owner", "editor"])
    .executeTakeFirst();
}
