/**
 * Inbox queries (engagement-api-v3.md, "Notifications (in-app inbox)"): every one is scoped to
 * one voter of one project, so one voter's routes never show or change another's rows. The rows
 * themselves are made by the consumer (src/events/notification-consumer.ts).
 */
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";

export interface NotificationRow {
  /** bigint, as a decimal string. */
  id: string;
  type: string;
  data: Record<string, unknown> | string;
  read_at: Date | null;
  created_at: Date;
  feature_id: number;
  feature_heading: string;
}

export interface InboxOwner {
  projectId: number;
  voterId: number;
}

/** unread: true = unread only, false = read only, undefined = all. */
export type ReadFilter = boolean | undefined;

function inbox(db: Db, owner: InboxOwner, unread: ReadFilter) {
  let query = db
    .selectFrom("notifications")
    .where("notifications.voter_id", "=", owner.voterId)
    .where("notifications.project_id", "=", owner.projectId);
  if (unread === true) query = query.where("notifications.read_at", "is", null);
  if (unread === false) query = query.where("notifications.read_at", "is not", null);
  return query;
}

/** One page of the voter's notifications, newest first, and how many match in all. */
export async function listNotifications(
  db: Db,
  owner: InboxOwner,
  filter: { unread: ReadFilter; limit: number; offset: number },
): Promise<{ rows: NotificationRow[]; total: number }> {
  const [rows, total] = await Promise.all([
    inbox(db, owner, filter.unread)
      .innerJoin("features", "features.id", "notifications.feature_id")
      .select([
        "notifications.id",
        "notifications.type",
        "notifications.data",
        "notifications.read_at",
        "notifications.created_at",
        "features.id as feature_id",
        "features.heading as feature_heading",
      ])
      .orderBy("notifications.id", "desc")
      .limit(filter.limit)
      .offset(filter.offset)
      .execute(),
    inbox(db, owner, filter.unread).select(sql<number>`count(*)::int`.as("n")).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows as NotificationRow[], total: Number(total.n) };
}

/** How many of the voter's notifications are unread. */
export async function countUnread(db: Db, owner: InboxOwner): Promise<number> {
  const row = await inbox(db, owner, true).select(sql<number>`count(*)::int`.as("n")).executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Marks read the voter's unread notifications among `ids` (row ids), or all of them when `ids` is
 * "all"; the number that went from unread to read. One UPDATE: a concurrent call that marked a
 * row first holds its lock until it commits, then this one re-checks `read_at` and skips it, so
 * each transition is counted by exactly one call.
 */
export async function markRead(db: Db, owner: InboxOwner, ids: string[] | "all", now: Date): Promise<number> {
  if (ids !== "all" && ids.length === 0) return 0;
  const row = await db
    .with("marked", (qb) => {
      let update = qb
        .updateTable("notifications")
        .set({ read_at: now })
        .where("voter_id", "=", owner.voterId)
        .where("project_id", "=", owner.projectId)
        .where("read_at", "is", null);
      if (ids !== "all") update = update.where("id", "=", sql<string>`any(${ids}::bigint[])`);
      return update.returning("id");
    })
    .selectFrom("marked")
    .select(sql<number>`count(*)::int`.as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
