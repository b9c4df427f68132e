/**
 * The unsubscribe routes' queries (engagement-api-v3.md, "Unsubscribe"): the voter a verified
 * token names, looked up by the project's slug and the voter's public id, and the one write
 * (voters.email_unsubscribed = true). An erased voter has no row: not found.
 */
import type { Db } from "../../../db/connect.ts";

/** The state an unsubscribe link shows: whether the voter is unsubscribed, and the project's name. */
export interface UnsubscribeState {
  unsubscribed: boolean;
  projectName: string;
}

/** The state of voter `voterPublicId` of project `slug`; undefined when there is no such voter. */
export async function readUnsubscribed(db: Db, slug: string, voterPublicId: string): Promise<UnsubscribeState | undefined> {
  const row = await db
    .selectFrom("voters")
    .innerJoin("projects", "projects.id", "voters.project_id")
    .select(["voters.email_unsubscribed", "projects.name"])
    .where("projects.slug", "=", slug)
    .where("voters.public_id", "=", voterPublicId)
    .executeTakeFirst();
  return row && { unsubscribed: row.email_unsubscribed, projectName: row.name };
}

/**
 * Unsubscribes voter `voterPublicId` of project `slug` (one statement; idempotent). Returns
 * false when there is no such voter. The voter's pending emails are dropped unsent by the
 * sender's eligibility check at their next attempt.
 */
export async function unsubscribe(db: Db, slug: string, voterPublicId: string, now: Date): Promise<boolean> {
  const updated = await db
    .updateTable("voters")
    .set({ email_unsubscribed: true, updated_at: now })
    .where("public_id", "=", voterPublicId)
    .where("project_id", "=", (eb) => eb.selectFrom("projects").select("id").where("slug", "=", slug))
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}
