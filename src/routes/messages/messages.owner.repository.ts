/**
 * Message reads and writes of the owner routes (owner-api-v3.md, AdminMessageObject; Routes
 * /messages). Writes take a `db | trx`.
 */

import type { Insertable, Updateable } from "kysely";
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { MessagesTable } from "../../../db/schema.ts";
import type { AdminMessageRow } from "./messages.repository.ts";

function adminMessages(db: Db, projectId: number) {
  return db
    .selectFrom("messages")
    .selectAll("messages")
    .select((eb) => [
      eb
        .selectFrom("message_dismissals")
        .select(sql<number>`count(*)::int`.as("n"))
        .whereRef("message_dismissals.message_id", "=", "messages.id")
        .as("dismissal_count"),
    ])
    .where("messages.project_id", "=", projectId);
}

function normalize<T extends { dismissal_count: number | null }>(row: T): T & { dismissal_count: number } {
  return { ...row, dismissal_count: Number(row.dismissal_count ?? 0) };
}

/** A page of every message of the project, past and future, in the public list's order. */
export async function listAdminMessages(db: Db, projectId: number, window: { limit: number; offset: number }): Promise<AdminMessageRow[]> {
  const rows = await adminMessages(db, projectId)
    .orderBy("messages.priority", "desc")
    .orderBy("messages.created_at", "desc")
    .orderBy("messages.id", "desc")
    .limit(window.limit)
    .offset(window.offset)
    .execute();
  return rows.map(normalize);
}

export async function countMessages(db: Db, projectId: number): Promise<number> {
  const row = await db
    .selectFrom("messages")
    .select(sql<number>`count(*)::int`.as("n"))
    .where("project_id", "=", projectId)
    .executeTakeFirstOrThrow();
  return row.n;
}

/** Message `id` of the project, its row locked until the transaction ends; undefined when absent. */
export async function lockMessage(db: Db, projectId: number, id: number) {
  return db.selectFrom("messages").selectAll().where("id", "=", id).where("project_id", "=", projectId).forUpdate().executeTakeFirst();
}

export async function findAdminMessage(db: Db, projectId: number, id: number): Promise<AdminMessageRow | undefined> {
  const row = await adminMessages(db, projectId).where("messages.id", "=", id).executeTakeFirst();
  return row && normalize(row);
}

export async function insertMessage(db: Db, values: Insertable<MessagesTable>): Promise<number> {
  const row = await db.insertInto("messages").values(values).returning("id").executeTakeFirstOrThrow();
  return row.id;
}

/** Applies `values` and stamps updated_at. */
export async function updateMessage(db: Db, id: number, values: Updateable<MessagesTable>): Promise<void> {
  await db
    .updateTable("messages")
    .set({ ...values, updated_at: sql`now()` })
    .where("id", "=", id)
    .execute();
}

/** Deletes the message; its dismissals go with it (ON DELETE CASCADE). False when absent. */
export async function deleteMessage(db: Db, projectId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom("messages").where("id", "=", id).where("project_id", "=", projectId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
