/**
 * What an erasure does to the stored events (owner-api-v3.md, Rules 3, "Erasure also scrubs"):
 * in every event whose object carries the voter's personal data (recorded with the voter as
 * `subjectVoterId`: voter.* events and the comment.* events of the voter's comments), the
 * personal fields become null, in the object and in `changes`, while `voter_id` and every other
 * field stay. Deliveries hold no body of their own (each attempt builds its EventObject from the
 * event row, src/events/deliveries.repository.ts), so every delivery not yet made sends the
 * scrubbed event; the receivers' answers logged for those deliveries are cut to their status.
 */
import { sql } from "kysely";
import type { Db } from "../../db/connect.ts";

/**
 * The fields an erasure nulls wherever they appear in an event of the voter: AdminVoterObject's
 * name, email, company, SSO subject, billing customer ids (customer_id shows one of them, and
 * matched_on which system it came from: null with it, as for a voter carrying neither, per
 * feedback-board-api-v3.md "Revenue objects") and subscription id; CommentObject's content and
 * author_name (the voter's display name).
 */
export const PERSONAL_FIELDS = [
  "display_name",
  "email",
  "company",
  "sso_id",
  "customer_id",
  "matched_on",
  "stripe_customer_id",
  "paddle_customer_id",
  "subscription_id",
  "content",
  "author_name",
] as const;

/**
 * `object` (an AdminVoterObject or a CommentObject) with every PERSONAL_FIELDS key it has set to
 * null; other fields (voter_id among them) as they are. For voter.deleted, recorded already scrubbed.
 */
export function scrubbedObject<T extends Record<string, unknown>>(object: T): T {
  const out: Record<string, unknown> = { ...object };
  for (const field of PERSONAL_FIELDS) if (field in out) out[field] = null;
  return out as T;
}

/**
 * Scrubs, inside the erasure's transaction `trx`, every stored event of project `projectId` whose
 * subject is voter `voterId` (internal id): each PERSONAL_FIELDS key of `data.object` becomes
 * null, and of `data.changes` becomes `{from: null, to: null}`. Then the delivery log of those
 * events keeps only the status of each logged answer (`HTTP 500`), not the excerpt of the
 * receiver's body, which may echo what was sent. Set-based: two statements whatever the count.
 * Returns the number of events scrubbed.
 *
 * Exactness: every write that records an event with this voter as subject holds a lock the
 * erasure takes first or waits for (PATCH /voters and billing sync: the voter row FOR UPDATE;
 * comment writes: the FOR KEY SHARE of the comment's foreign key on the voter, or the comment
 * row), and the caller runs this after those locks in READ COMMITTED, so the statement sees every
 * event committed before it, and any write after it finds the voter gone.
 */
export async function scrubVoterEvents(trx: Db, projectId: number, voterId: number): Promise<number> {
  const fields = [...PERSONAL_FIELDS];
  const scrubbed = await sql<{ seq: string }>`
    UPDATE events e
    SET data = e.data || jsonb_build_object(
      'object', CASE WHEN jsonb_typeof(e.data->'object') = 'object'
        THEN (e.data->'object') || coalesce((SELECT jsonb_object_agg(f, NULL::text) FROM unnest(${fields}::text[]) AS f
                                             WHERE (e.data->'object') ? f), '{}'::jsonb)
        ELSE e.data->'object' END,
      'changes', CASE WHEN jsonb_typeof(e.data->'changes') = 'object'
        THEN (e.data->'changes') || coalesce((SELECT jsonb_object_agg(f, '{"from": null, "to": null}'::jsonb)
                                              FROM unnest(${fields}::text[]) AS f WHERE (e.data->'changes') ? f), '{}'::jsonb)
        ELSE e.data->'changes' END)
    WHERE e.project_id = ${projectId} AND e.subject_voter_id = ${voterId}
    RETURNING e.seq::text AS seq`.execute(trx);
  const seqs = scrubbed.rows.map((row) => row.seq);
  if (seqs.length > 0) {
    await sql`
      UPDATE webhook_deliveries
      SET last_error = substring(last_error from '^HTTP [0-9]+')
      WHERE event_seq = ANY(${seqs}::bigint[]) AND last_error ~ '^HTTP [0-9]+.'`.execute(trx);
  }
  return seqs.length;
}

/** The notification types whose `data` quotes a comment's author and text (engagement-api-v3.md, "Notifications (in-app inbox)"). */
export const QUOTING_NOTIFICATION_TYPES = ["replied", "team_commented"] as const;

/**
 * Nulls, inside the erasure's transaction `trx`, `author_name` and `excerpt` of every
 * notification of project `projectId` made from a comment.created event of voter `voterId`
 * (internal id; the event's subject), whoever's inbox holds it: the notification stays listed
 * (engagement-api-v3.md: it stays while its feature exists) with `comment_id` and `parent_id`,
 * as the event itself keeps its ids with `content` and `author_name` null (owner-api-v3.md,
 * Rules 3; engagement-api-v3.md, "Snapshot and erasure"). The other types quote features,
 * releases and the team's response, which an erasure keeps. One statement, by the events'
 * subject index and the notifications' (event_seq, type, voter_id) key. Returns the number of
 * notifications scrubbed.
 *
 * Exactness: the consumer key-share locks the comment it notifies of until its batch commits
 * (src/events/notification-consumer.ts), and the caller runs this after locking the voter's
 * comments FOR UPDATE in READ COMMITTED, so this statement sees every notification made from
 * them, and a consumer after it finds the comments gone and makes none.
 */
export async function scrubVoterNotifications(trx: Db, projectId: number, voterId: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH scrubbed AS (
      UPDATE notifications n
      SET data = n.data || '{"author_name": null, "excerpt": null}'::jsonb
      FROM events e
      WHERE e.project_id = ${projectId} AND e.subject_voter_id = ${voterId} AND e.type = 'comment.created'
        AND n.event_seq = e.seq AND n.type = ANY(${[...QUOTING_NOTIFICATION_TYPES]}::text[]) AND n.project_id = ${projectId}
      RETURNING 1)
    SELECT count(*)::int AS n FROM scrubbed`.execute(trx);
  return Number(rows[0]?.n ?? 0);
}
