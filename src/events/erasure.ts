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
