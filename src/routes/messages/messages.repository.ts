/** Message queries (contract, MessageObject, "Query of GET /projects/{slug}/messages"). */
import type { Db } from "../../../db/connect.ts";
import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";

export interface MessageRow {
  id: number;
  title: string;
  body: string;
  kind: string;
  presentation: string;
  priority: number;
  action_label: string | null;
  action_url: string | null;
  is_dismissible: boolean;
  min_app_version: string | null;
  max_app_version: string | null;
  starts_at: Date | null;
  ends_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A message row as the owner routes read it: targeting fields and the dismissal count too. */
export interface AdminMessageRow extends MessageRow {
  platforms: string[] | null;
  dismissal_count: number;
}

export interface MessageFilter {
  now: Date;
  /** Asking platform; undefined sends only messages aimed at everybody (platforms null). */
  platform: string | undefined;
  /** Whether the client sent app_version; without one, messages naming a range are left out. */
  hasAppVersion: boolean;
  /** Internal id of the request's voter, whose dismissals are left out; null without identity. */
  voterId: number | null;
}

/**
 * Every message of the project running at `now` that matches platform, the presence of an app
 * version and the voter's dismissals, in list order (priority desc, created_at desc, id desc).
 * The version range itself is checked by the caller (semver comparison, not SQL); a project has
 * few live messages, so the candidates are loaded whole and paged after that check.
 */
export async function listCandidateMessages(db: Db, projectId: number, filter: MessageFilter): Promise<MessageRow[]> {
  let query = db
    .selectFrom("messages")
    .select([
      "messages.id",
      "messages.title",
      "messages.body",
      "messages.kind",
      "messages.presentation",
      "messages.priority",
      "messages.action_label",
      "messages.action_url",
      "messages.is_dismissible",
      "messages.min_app_version",
      "messages.max_app_version",
      "messages.starts_at",
      "messages.ends_at",
      "messages.created_at",
      "messages.updated_at",
    ])
    .where("messages.project_id", "=", projectId)
    .where((eb) => eb.or([eb("messages.starts_at", "is", null), eb("messages.starts_at", "<=", filter.now)]))
    .where((eb) => eb.or([eb("messages.ends_at", "is", null), eb("messages.ends_at", ">", filter.now)]));
  const { platform, voterId } = filter;
  query =
    platform === undefined
      ? query.where("messages.platforms", "is", null)
      : query.where((eb) => eb.or([eb("messages.platforms", "is", null), eb(eb.val(platform), "=", eb.fn.any("messages.platforms"))]));
  if (!filter.hasAppVersion) {
    query = query.where("messages.min_app_version", "is", null).where("messages.max_app_version", "is", null);
  }
  if (voterId !== null) {
    query = query.where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom("message_dismissals")
            .select("message_dismissals.message_id")
            .whereRef("message_dismissals.message_id", "=", "messages.id")
            .where("message_dismissals.voter_id", "=", voterId),
        ),
      ),
    );
  }
  return query.orderBy("messages.priority", "desc").orderBy("messages.created_at", "desc").orderBy("messages.id", "desc").execute();
}

/** The message `id` of the project (any state), or undefined. */
export async function findMessage(db: Db, projectId: number, id: number): Promise<{ id: number; is_dismissible: boolean } | undefined> {
  return db
    .selectFrom("messages")
    .select(["id", "is_dismissible"])
    .where("id", "=", id)
    .where("project_id", "=", projectId)
    .executeTakeFirst();
}

/**
 * Records the dismissal; a repeat is a no-op (primary key message_id, voter_id). Holds the write
 * lock of project `projectId` (src/lib/data/project-write-lock.ts).
 */
export async function insertDismissal(db: Db, projectId: number, messageId: number, voterId: number): Promise<void> {
  await withProjectWriteLock(db, projectId, (trx) =>
    trx
      .insertInto("message_dismissals")
      .values({ message_id: messageId, voter_id: voterId })
      .onConflict((oc) => oc.columns(["message_id", "voter_id"]).doNothing())
      .execute(),
  );
}
