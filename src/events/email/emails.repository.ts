/**
 * The email pipeline's queries (engagement-api-v3.md, "Email notifications"; docs/email.md):
 * gathering notifications into emails (digests), claiming due emails, and recording each
 * attempt's outcome. Times are the caller's `now` (the worker's clock; tests pass their own).
 *
 * Exactness across instances: one gatherer at a time holds a voter (a transaction-level advisory
 * lock, tried, never waited for) and locks that voter's `new` notifications while it groups
 * them, so two instances never put one notification into two emails; rows another writer holds
 * (a voter marking them read) are skipped, so gathering never waits and never deadlocks. A due
 * email is claimed (FOR UPDATE SKIP LOCKED, then a claim token and a lease in next_attempt_at)
 * in its own committed statement before any SMTP, and an outcome is recorded only while the
 * claim token is still the row's. Only a crash between the SMTP server's acceptance and the
 * record may send an email twice (when the lease ends).
 */
import { randomUUID } from "node:crypto";
import { type InsertObject, type Selectable, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { Database, EmailsTable, NotificationSettings } from "../../../db/schema.ts";
import { inTransaction } from "../../lib/data/transaction.ts";
import { type EmailNotification, emailSubject, statusNames } from "./render.ts";

/**
 * A notification first looked at more than this long after its digest window closed gets no
 * email: after SMTP_URL is first set, or every worker was stopped for a day, the backlog is not
 * mailed all at once about old changes.
 */
export const STALE_AFTER_MINUTES = 24 * 60;

/** First half of the gatherers' per-voter advisory lock key ("em" + 1), apart from every other use. */
const GATHER_LOCK_CLASS = 0x656d0001;

/** Seconds a claim lasts: past nodemailer's connection, greeting and socket timeouts together. */
export const CLAIM_LEASE_SECONDS = 120;

/** Voters whose window is looked at per gathering pass, and per transaction of it. */
const GATHER_VOTERS_PER_PASS = 2000;
const GATHER_VOTERS_PER_TRANSACTION = 200;

/**
 * Marks `skipped` every `new` notification that gets no email (engagement-api-v3.md: email
 * off or no sender address for the project; voter not sso, without email, or unsubscribed;
 * read already; or stale, see STALE_AFTER_MINUTES). Returns how many.
 */
export async function skipIneligible(db: Db, now: Date): Promise<number> {
  // Rows locked elsewhere (being marked read, or gathered) are left for the next pass: this
  // statement never waits on a row, so it cannot deadlock with those writes.
  const result = await sql`
    UPDATE notifications SET email_state = 'skipped'
    WHERE id IN (
      SELECT n.id FROM notifications n
      JOIN projects p ON p.id = n.project_id
      JOIN voters v ON v.id = n.voter_id
      WHERE n.email_state = 'new'
      AND (
        coalesce((p.notification_settings->>'email_enabled')::boolean, false) IS NOT TRUE
        OR p.notification_settings->>'from_address' IS NULL
        OR v.kind <> 'sso' OR v.email IS NULL OR v.email_unsubscribed
        OR n.read_at IS NOT NULL
        OR n.created_at < ${now}::timestamptz
             - ((coalesce((p.notification_settings->>'digest_minutes')::int, 0) + ${STALE_AFTER_MINUTES}) * interval '1 minute')
      )
      FOR UPDATE OF n SKIP LOCKED)
      AND email_state = 'new'`.execute(db);
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
  voter_id: number;
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
 * Turns the `new` notifications of `voterIds` whose window has closed by `now` into emails, in
 * one transaction: it takes the voters no other gatherer holds (advisory lock), locks their
 * notifications that no other writer holds, and reads them again. Each voter's window is its
 * first notification's time plus digest_minutes; those inside it that are unread go into one
 * email (with digest_minutes 0, one email each) and become `queued`, read ones `skipped`.
 * Returns the number of emails made (none for a voter another instance holds or that is no
 * longer eligible: skipIneligible takes those on its next pass).
 */
async function gatherVoters(db: Db, voterIds: readonly number[], now: Date): Promise<number> {
  if (voterIds.length === 0) return 0;
  return inTransaction(db, async (trx) => {
    // One gatherer per voter (the others skip that voter this pass), and rows being marked read
    // right now are skipped (they are left out anyway): gathering never waits on a lock.
    const mine = await sql<{ voter_id: number }>`
      SELECT u.voter_id FROM unnest(${[...voterIds]}::int[]) AS u(voter_id)
      WHERE pg_try_advisory_xact_lock(${GATHER_LOCK_CLASS}::int, u.voter_id)`.execute(trx);
    if (mine.rows.length === 0) return 0;
    const locked = await sql<LockedNotification>`
      SELECT n.id::text AS id, n.voter_id, n.created_at, n.read_at, f.id AS feature_id, f.heading
      FROM notifications n JOIN features f ON f.id = n.feature_id
      WHERE n.voter_id = ANY(${mine.rows.map((row) => row.voter_id)}::int[]) AND n.email_state = 'new'
      ORDER BY n.voter_id, n.id
      FOR UPDATE OF n SKIP LOCKED`.execute(trx);
    if (locked.rows.length === 0) return 0;
    const contexts = await trx
      .selectFrom("voters")
      .innerJoin("projects", "projects.id", "voters.project_id")
      .select([
        "voters.id",
        "voters.project_id",
        "voters.email",
        "voters.kind",
        "voters.email_unsubscribed",
        "projects.name",
        "projects.notification_settings",
      ])
      .where("voters.id", "in", [...voterIds])
      .execute();
    const byVoter = new Map<number, LockedNotification[]>();
    for (const row of locked.rows) {
      const list = byVoter.get(row.voter_id) ?? [];
      list.push(row);
      byVoter.set(row.voter_id, list);
    }
    const emails: InsertObject<Database, "emails">[] = [];
    const queued: LockedNotification[] = [];
    const skipped: LockedNotification[] = [];
    for (const context of contexts) {
      const settings = context.notification_settings;
      const rows = (byVoter.get(context.id) ?? []).sort(
        (a, b) => a.created_at.getTime() - b.created_at.getTime() || Number(BigInt(a.id) - BigInt(b.id)),
      );
      const first = rows[0];
      if (!first || !eligible(settings, context) || context.email === null || settings.from_address === null) continue;
      const windowMs = settings.digest_minutes * 60_000;
      const windowEnd = first.created_at.getTime() + windowMs;
      if (windowEnd > now.getTime()) continue;
      // digest_minutes 0: every notification made by now, each its own window.
      const until = windowMs === 0 ? now.getTime() : windowEnd;
      const inWindow = rows.filter((row) => row.created_at.getTime() <= until);
      const unread = inWindow.filter((row) => row.read_at === null);
      skipped.push(...inWindow.filter((row) => row.read_at !== null));
      if (unread.length === 0) continue;
      queued.push(...unread);
      const groups = windowMs === 0 ? unread.map((row) => [row]) : [unread];
      for (const group of groups) {
        emails.push({
          project_id: context.project_id,
          voter_id: context.id,
          to_address: context.email,
          subject: emailSubject(
            context.name,
            group.map((row) => ({ feature: { id: row.feature_id, heading: row.heading } })),
          ),
          notification_ids: bigintArray(group.map((row) => row.id)),
          next_attempt_at: now,
          message_id: newMessageId(settings.from_address),
          created_at: now,
        });
      }
    }
    await setState(trx, skipped, "skipped");
    await setState(trx, queued, "queued");
    if (emails.length > 0) await trx.insertInto("emails").values(emails).execute();
    return emails.length;
  });
}

/** Decimal ids as a bigint[] value (drivers would send a string array as text[]). */
function bigintArray(ids: readonly string[]) {
  return sql<string[]>`${[...ids]}::bigint[]`;
}

async function setState(trx: Db, rows: readonly { id: string }[], state: "skipped" | "queued"): Promise<void> {
  if (rows.length === 0) return;
  await sql`UPDATE notifications SET email_state = ${state} WHERE id = ANY(${rows.map((row) => row.id)}::bigint[])`.execute(trx);
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
  const due = await votersDue(db, now);
  for (let i = 0; i < due.length; i += GATHER_VOTERS_PER_TRANSACTION) {
    made += await gatherVoters(db, due.slice(i, i + GATHER_VOTERS_PER_TRANSACTION), now);
  }
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
  project: {
    slug: string;
    name: string;
    notification_settings: NotificationSettings;
    /** Status value -> its roadmap column's name (statusNames). */
    status_names: ReadonlyMap<string, string>;
  };
  /** The email's notifications still unread and whose feature exists, oldest first. */
  notifications: EmailNotification[];
}

/**
 * The context of each claimed email (by email id), read in at most four statements whatever their
 * number; an email whose voter is gone has none.
 */
export async function loadEmailContexts(db: Db, emails: readonly EmailRow[]): Promise<Map<string, EmailContext>> {
  const contexts = new Map<string, EmailContext>();
  if (emails.length === 0) return contexts;
  const heads = await db
    .selectFrom("voters")
    .innerJoin("projects", "projects.id", "voters.project_id")
    .select([
      "voters.id",
      "voters.public_id",
      "voters.kind",
      "voters.email",
      "voters.email_unsubscribed",
      "projects.id as project_id",
      "projects.slug",
      "projects.name",
      "projects.notification_settings",
    ])
    .where("voters.id", "in", [...new Set(emails.map((email) => email.voter_id))])
    .execute();
  const projectIds = [...new Set(heads.map((head) => head.project_id))];
  const columns =
    projectIds.length === 0
      ? []
      : await db
          .selectFrom("columns")
          .innerJoin("boards", "boards.id", "columns.board_id")
          .select(["columns.id", "columns.project_id", "columns.name", "columns.position", "columns.status"])
          .where("boards.kind", "=", "roadmap")
          .where("columns.project_id", "in", projectIds)
          .execute();
  const namesOf = new Map(projectIds.map((id) => [id, statusNames(columns.filter((column) => column.project_id === id))] as const));
  const ids = emails.flatMap((email) => email.notification_ids);
  const notifications =
    ids.length === 0
      ? []
      : await sql<{
          id: string;
          voter_id: number;
          type: string;
          data: Record<string, unknown> | null;
          feature_id: number;
          heading: string;
        }>`
          SELECT n.id::text AS id, n.voter_id, n.type, n.data, f.id AS feature_id, f.heading
          FROM notifications n JOIN features f ON f.id = n.feature_id
          WHERE n.id = ANY(${ids}::bigint[]) AND n.read_at IS NULL
          ORDER BY n.created_at, n.id`
          .execute(db)
          .then((result) => result.rows);
  // The slugs of the releases shipped notifications name (a release deleted since has none).
  const releaseIds = [
    ...new Set(
      notifications.flatMap((row) => {
        const id = row.type === "shipped" ? (row.data?.release as { id?: unknown } | undefined)?.id : undefined;
        return typeof id === "number" && Number.isInteger(id) ? [id] : [];
      }),
    ),
  ];
  const releaseSlugs = new Map(
    releaseIds.length === 0
      ? []
      : (await db.selectFrom("releases").select(["id", "project_id", "slug"]).where("id", "in", releaseIds).execute()).map(
          (row) => [row.id, row] as const,
        ),
  );
  const byId = new Map(notifications.map((row) => [row.id, row]));
  for (const email of emails) {
    const head = heads.find((row) => row.id === email.voter_id);
    if (!head) continue;
    const own = new Set(email.notification_ids);
    contexts.set(email.id, {
      voter: { public_id: head.public_id, kind: head.kind, email: head.email, email_unsubscribed: head.email_unsubscribed },
      project: {
        slug: head.slug,
        name: head.name,
        notification_settings: head.notification_settings,
        status_names: namesOf.get(head.project_id) ?? statusNames([]),
      },
      // In creation order (the statement's), only this email's and only its voter's.
      notifications: notifications
        .filter((row) => own.has(row.id) && row.voter_id === email.voter_id && byId.has(row.id))
        .map((row) => ({
          id: row.id,
          type: row.type,
          data: row.data ?? {},
          feature: { id: row.feature_id, heading: row.heading },
          ...releaseSlugOf(row, releaseSlugs, head.project_id),
        })),
    });
  }
  return contexts;
}

/** `{releaseSlug}` of a shipped notification whose release (of `projectId`) still exists, else nothing. */
function releaseSlugOf(
  row: { type: string; data: Record<string, unknown> | null },
  releases: ReadonlyMap<number, { project_id: number; slug: string }>,
  projectId: number,
): { releaseSlug?: string } {
  const id = row.type === "shipped" ? (row.data?.release as { id?: unknown } | undefined)?.id : undefined;
  const release = typeof id === "number" ? releases.get(id) : undefined;
  return release && release.project_id === projectId ? { releaseSlug: release.slug } : {};
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
