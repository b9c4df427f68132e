/** The owner's email log query (engagement-api-v3.md, GET /admin/emails): newest first, optional status. */
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import { type PageRequest, pageOffset } from "../../lib/http/pagination.ts";

export interface EmailLogRow {
  id: string;
  voter_public_id: string;
  to_address: string;
  subject: string;
  notification_ids: string[];
  status: "pending" | "sent" | "failed";
  attempts: number;
  last_error: string | null;
  sent_at: Date | null;
  created_at: Date;
}

/** One page of project `projectId`'s emails (of `status` when given), and the total. */
export async function listEmails(
  db: Db,
  projectId: number,
  status: EmailLogRow["status"] | undefined,
  request: PageRequest,
): Promise<{ rows: EmailLogRow[]; total: number }> {
  const rows = await db
    .selectFrom("emails")
    .innerJoin("voters", "voters.id", "emails.voter_id")
    .select([
      sql<string>`emails.id::text`.as("id"),
      "voters.public_id as voter_public_id",
      "emails.to_address",
      "emails.subject",
      sql<string[]>`emails.notification_ids::text[]`.as("notification_ids"),
      "emails.status",
      "emails.attempts",
      "emails.last_error",
      "emails.sent_at",
      "emails.created_at",
    ])
    .where("emails.project_id", "=", projectId)
    .$if(status !== undefined, (q) => q.where("emails.status", "=", status!))
    .orderBy("emails.id", "desc")
    .limit(request.per_page)
    .offset(pageOffset(request))
    .execute();
  const { total } = await db
    .selectFrom("emails")
    .select(sql<number>`count(*)::int`.as("total"))
    .where("project_id", "=", projectId)
    .$if(status !== undefined, (q) => q.where("status", "=", status!))
    .executeTakeFirstOrThrow();
  return { rows, total };
}
