/**
 * The email pipeline's queries (engagement-api-v3.md, "Email notifications"; docs/email.md):
 * gathering notifications into emails (digests), claiming due emails, and recording each
 * attempt's outcome. Times are the caller's `now` (the worker's clock; tests pass their own).
 *
 * Exactness across instances: a voter's `new` notifications are row-locked (FOR UPDATE, waiting)
 * while they are gathered and re-read under the lock, so two instances never put one
 * notification into two emails; a due email is claimed (FOR UPDATE SKIP LOCKED, then a claim
 * token and a lease in next_attempt_at) in its own committed statement before any SMTP, and an
 * outcome is recorded only while the claim token is still the row's. Only a crash between the
 * SMTP server's acceptance and the record may send an email twice (when the lease ends).
 */
import { randomUUID } from "node:crypto";
import { type Selectable, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { EmailsTable, NotificationSettings } from "../../../db/schema.ts";
import { inTransaction } from "../../lib/data/transaction.ts";
import { type EmailNotification, emailSubject } from "./render.ts";

/**
 * A notification first looked at more than this long after its digest window closed gets no
 * email: after SMTP_URL is first set, or every worker was stopped for a day, the backlog is not
 * mailed all at once about old changes.
 */
export const STALE_AFTER_MINUTES = 24 * 60;

/** Seconds a claim lasts: past nodemailer's connection, greeting and socket timeouts together. */
export const CLAIM_LEASE_SECONDS = 120;

/** Voters whose window is looked at per gathering pass. */
const GATHER_VOTERS_PER_PASS = 500;

/**
 * Marks `skipped` every `new` notification that gets no email (engagement-api-v3.md: email
 * off or no sender address for the project; voter not sso, without email, or unsubscribed;
 * read already; or stale, see STALE_AFTER_MINUTES). Returns how many.
 */
export async function skipIneligible(db: Db, now: Date): Promise<number> {
  const result = await sql`
    UPDATE notifications n SET email_state = 'skipped'
    FROM projects p, voters v
    WHERE n.email_state = 'new' AND p.id = n.project_id AND v.id = n.voter_id
      AND (
        coalesce((p.notification_settings->>'email_enabled')::boolean, false) IS NOT TRUE
        OR p.notification_settings->>'from_address' IS NULL
        OR v.kind <> 'sso' OR v.email IS NULL OR v.email_unsubscribed
        OR n.read_at IS NOT NULL
        OR n.created_at < ${now}::timestamptz
             - ((coalesce((p.notification_settings->>'digest_minutes')::int, 0) + ${STALE_AFTER_MINUTES}) * interval '1 minute')
      )`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Voters with a `new` notification whose digest window has closed by `now`. */
async function votersDue(db: Db, now: Date): Promise<number[]> {
  const rows = await sql<{ voter_id: number }>`
    SELECT n.voter_id
    FROM notifications n JOIN projects p ON p.id = n.project_id
    WHERE n.email_state = 'new'
    GROUP BY n.voter_id, p.notification_settings
    HAVING min(n.created_at) + (coalesce((p.notification_settings->>'digest_minutes')::int, 0) * interval '1 minute') <= ${now}::timestamptz
    LIMIT ${GATHER_VOTERS_PER_PASS}`.execute(db);
  return rows.rows.map((row) => row.voter_id);
}

interface LockedNotification {
  id: string;
  created_at: Date;
  read_at: Date | null;
  feature_id: number;
  heading: string;
}

/** `<uuid@domain of the sender>`: unique per email (RFC 5322 3.6.4). */
export function newMessageId(fromAddress: string): string {
  const domain = fromAddress.slice(fromAddress.lastIndexOf("@") + 1) || "localhost";
  return `<${randomUUID()}@${domain}>`;
}

/**
 * Turns voter `voterId`'s `new` notifications whose window has closed by `now` into emails, in
 * one transaction: the notifications are locked and read again, the window is the first one's
 * time plus digest_minutes, and those inside it that are unread go into one email (with
 * digest_minutes 0, one email each) and become `queued`; read ones become `skipped`. Returns the
 * number of emails made (0 when another instance got there first or the voter is no longer
 * eligible: skipIneligible takes those on its next pass).
 */
async function gatherVoter(db: Db, voterId: number, now: Date): Promise<number> {
  return inTransaction(db, async (trx) => {
    const rows = await sql<LockedNotification>`
      SELECT n.id::text AS id, n.created_at, n.read_at, f.id AS feature_id, f.heading
      FROM notifications n JOIN features f ON f.id = n.feature_id
      WHERE n.voter_id = ${voterId} AND n.email_state = 'new'
      ORDER BY n.created_at, n.id
      FOR UPDATE OF n`.execute(trx);
    const locked = rows.rows;
    const first = locked[0];
    if (!first) return 0;
    const context = await trx
      .selectFrom("voters")
      .innerJoin("projects", "projects.id", "voters.project_id")
      .select([
        "voters.project_id",
        "voters.email",
        "voters.kind",
        "voters.email_unsubscribed",
        "projects.name",
        "projects.notification_settings",
      ])
      .where("voters.id", "=", voterId)
      .executeTakeFirst();
    const settings = context?.notification_settings;
    if (!context || !settings || !eligible(settings, context) || context.email === null || settings.from_address === null) return 0;
    const windowMs = settings.digest_minutes * 60_000;
    const windowEnd = first.created_at.getTime() + windowMs;
    if (windowEnd > now.getTime()) return 0;
    // digest_minutes 0: every notification made by now, each its own window.
    const until = windowMs === 0 ? now.getTime() : windowEnd;
    const inWindow = locked.filter((row) => row.created_at.getTime() <= until);
    const unread = inWindow.filter((row) => row.read_at === null);
    const read = inWindow.filter((row) => row.read_at !== null);
    if (read.length > 0) await setState(trx, read, "skipped");
    if (unread.length === 0) return 0;
    // digest_minutes 0: each notification on its own; else the window's notifications together.
    const groups = windowMs === 0 ? unread.map((row) => [row]) : [unread];
    const toAddress = context.email;
    const fromAddress = settings.from_address;
    await trx
      .insertInto("emails")
      .values(
        groups.map((group) => ({
          project_id: context.project_id,
          voter_id: voterId,
          to_address: toAddress,
          subject: emailSubject(
            context.name,
            group.map((row) => ({ feature: { id: row.feature_id, heading: row.heading } })),
          ),
          notification_ids: bigintArray(group.map((row) => row.id)),
          next_attempt_at: now,
          message_id: newMessageId(fromAddress),
          created_at: now,
        })),
      )
      .execute();
    await setState(trx, unread, "queued");
    return groups.length;
  });
}

/** Decimal ids as a bigint[] value (drivers would send a string array as text[]). */
function bigintArray(ids: readonly string[]) {
  return sql<string[]>`${[...ids]}::bigint[]`;
}

async function setState(trx: Db, rows: readonly { id: string }[], state: "skipped" | "queued"): Promise<void> {
  await trx
    .updateTable("notifications")
    .set({ email_state: state })
    .where(
      "id",
      "in",
      rows.map((row) => row.id),
    )
    .execute();
}

/** Whether the project and voter allow an email now (engagement-api-v3.md, "Email notifications"). */
export function eligible(
  settings: NotificationSettings,
  voter: { kind: string; email: string | null; email_unsubscribed: boolean },
): boolean {
  return (
    settings.email_enabled && settings.from_address !== null && voter.kind === "sso" && voter.email !== null && !voter.email_unsubscribed
  );
}

/**
 * One gathering pass: skips what gets no email, then closes the windows that have ended by
 * `now`. Returns the number of emails made.
 */
export async function gatherDigests(db: Db, now: Date): Promise<number> {
  await skipIneligible(db, now);
  let made = 0;
  for (const voterId of await votersDue(db, now)) made += await gatherVoter(db, voterId, now);
  return made;
}

export type EmailRow = Selectable<EmailsTable>;

/** A claimed email: its row and the claim's token. */
export interface ClaimedEmail {
  row: EmailRow;
  claimToken: string;
}

/**
 * Claims up to `limit` pending emails due by `now`: one committed statement sets a fresh claim
 * token and moves next_attempt_at to `now` + CLAIM_LEASE_SECONDS, so no other instance takes
 * them until the lease ends (SKIP LOCKED: instances claiming at once take different rows).
 */
export async function claimDueEmails(db: Db, now: Date, limit: number): Promise<ClaimedEmail[]> {
  const token = randomUUID();
  const leaseEnd = new Date(now.getTime() + CLAIM_LEASE_SECONDS * 1000);
  const rows = await sql<EmailRow>`
    UPDATE emails SET claim_token = ${token}, next_attempt_at = ${leaseEnd}
    WHERE id IN (
      SELECT id FROM emails
      WHERE status = 'pending' AND next_attempt_at <= ${now}::timestamptz
      ORDER BY next_attempt_at, id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED)
    RETURNING id::text AS id, project_id, voter_id, to_address, subject, notification_ids::text[] AS notification_ids, status,
      attempts, last_error, next_attempt_at, claim_token, message_id, sent_at, created_at`.execute(db);
  return rows.rows.map((row) => ({ row, claimToken: token }));
}

/** What an attempt needs besides the email row: the voter, the project and the unread notifications. */
export interface EmailContext {
  voter: { public_id: string; kind: string; email: string | null; email_unsubscribed: boolean };
  project: { slug: string; name: string; notification_settings: NotificationSettings };
  /** The email's notifications still unread and whose feature exists, oldest first. */
  notifications: EmailNotification[];
}

/** The context of a claimed email, or undefined when its voter is gone. */
export async function loadEmailContext(db: Db, email: EmailRow): Promise<EmailContext | undefined> {
  const head = await db
    .selectFrom("voters")
    .innerJoin("projects", "projects.id", "voters.project_id")
    .select([
      "voters.public_id",
      "voters.kind",
      "voters.email",
      "voters.email_unsubscribed",
      "projects.slug",
      "projects.name",
      "projects.notification_settings",
    ])
    .where("voters.id", "=", email.voter_id)
    .executeTakeFirst();
  if (!head) return undefined;
  const notifications = await db
    .selectFrom("notifications")
    .innerJoin("features", "features.id", "notifications.feature_id")
    .select(["notifications.id", "notifications.type", "notifications.data", "features.id as feature_id", "features.heading"])
    .where("notifications.id", "in", email.notification_ids.length > 0 ? email.notification_ids : ["0"])
    .where("notifications.voter_id", "=", email.voter_id)
    .where("notifications.read_at", "is", null)
    .orderBy("notifications.created_at")
    .orderBy("notifications.id")
    .execute();
  return {
    voter: { public_id: head.public_id, kind: head.kind, email: head.email, email_unsubscribed: head.email_unsubscribed },
    project: { slug: head.slug, name: head.name, notification_settings: head.notification_settings },
    notifications: notifications.map((row) => ({
      id: String(row.id),
      type: row.type,
      data: row.data ?? {},
      feature: { id: row.feature_id, heading: row.heading },
    })),
  };
}

/** The outcome of one attempt, as recorded. */
export type EmailOutcome =
  | { kind: "sent"; at: Date; to: string; subject: string; notificationIds: string[] }
  | { kind: "retry"; at: Date; error: string; nextAttemptAt: Date; to: string; subject: string; notificationIds: string[] }
  | { kind: "failed"; at: Date; error: string; to: string; subject: string; notificationIds: string[] }
  /** Nothing left to send (every notification read or gone) or the voter no longer eligible: the email is dropped. */
  | { kind: "dropped" };

/**
 * Records `outcome` of the attempt on `claimed`, only while the claim is still its own. Returns
 * false when it was not (the lease ended and another instance claimed it, or the voter was erased).
 */
export async function recordOutcome(db: Db, claimed: ClaimedEmail, outcome: EmailOutcome): Promise<boolean> {
  const { row, claimToken } = claimed;
  if (outcome.kind === "dropped") {
    const removed = await db.deleteFrom("emails").where("id", "=", row.id).where("claim_token", "=", claimToken).executeTakeFirst();
    return Number(removed.numDeletedRows) > 0;
  }
  const common = {
    attempts: row.attempts + 1,
    to_address: outcome.to,
    subject: outcome.subject,
    notification_ids: bigintArray(outcome.notificationIds),
    claim_token: null,
  };
  const fields =
    outcome.kind === "sent"
      ? { ...common, status: "sent" as const, sent_at: outcome.at, last_error: null }
      : outcome.kind === "failed"
        ? { ...common, status: "failed" as const, last_error: outcome.error }
        : { ...common, last_error: outcome.error, next_attempt_at: outcome.nextAttemptAt };
  const updated = await db
    .updateTable("emails")
    .set(fields)
    .where("id", "=", row.id)
    .where("claim_token", "=", claimToken)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}
