/**
 * Queries of the Atom feeds (engagement-api-v3.md, "Feeds"): the latest public releases, the
 * latest public status changes from the events outbox, and what the feed head needs of the project.
 */
import { type RawBuilder, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";

/** What the feed head and entry links need of the project. */
export interface FeedProjectRow {
  /** The feed's `updated` when it has no entry (an imported project's import time). */
  created_at: Date;
  /** The owner's feature page address holding `{feature_id}` (notification settings), or null. */
  board_url: string | null;
  /** The owner's release page address holding `{release_slug}` (notification settings), or null. */
  changelog_url: string | null;
}

/** One public release of the changelog feed. */
export interface FeedReleaseRow {
  id: number;
  /** Name in its public changelog address (changelog_url's `{release_slug}`). */
  slug: string;
  name: string;
  /** Sanitized HTML of the note, as the public changelog serves it; null when there is no note. */
  body_html: string | null;
  published_at: Date;
}

/** One status change of the roadmap feed. */
export interface FeedStatusChangeRow {
  txid: string;
  seq: string;
  created_at: Date;
  feature_id: number;
  /** The feature's heading now. */
  heading: string;
  from_status: string | null;
  to_status: string;
}

/** created_at, board_url and changelog_url of project `projectId`; throws when the project is gone. */
export async function findFeedProject(db: Db, projectId: number): Promise<FeedProjectRow> {
  return db
    .selectFrom("projects")
    .select([
      "created_at",
      sql<string | null>`notification_settings->>'board_url'`.as("board_url"),
      sql<string | null>`notification_settings->>'changelog_url'`.as("changelog_url"),
    ])
    .where("id", "=", projectId)
    .executeTakeFirstOrThrow();
}

/**
 * The `limit` most recently published public releases of the project at `now` (published_at set
 * and not after `now`: the public changelog's rule; drafts and scheduled ones never), newest
 * first, id descending among equal times. Featured releases get no precedence: a feed is in time order.
 */
export async function listFeedReleases(db: Db, projectId: number, now: Date, limit: number): Promise<FeedReleaseRow[]> {
  const rows = await db
    .selectFrom("releases")
    .select(["id", "slug", "name", "body_html", "published_at"])
    .where("project_id", "=", projectId)
    .where("published_at", "is not", null)
    .where("published_at", "<=", now)
    .orderBy("published_at", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
  return rows.map((row) => ({ ...row, published_at: row.published_at as Date }));
}

/** Status-change events examined per query while filling a roadmap feed. */
const STATUS_CHANGE_PAGE = 200;

interface StatusChangeCandidate extends Omit<FeedStatusChangeRow, "feature_id" | "heading"> {
  feature_id: number | null;
  heading: string | null;
  /** created_at as Postgres writes it (microseconds kept): the next page's keyset bound. */
  cursor_at: string;
  listed: boolean;
}

/**
 * The `limit` most recent `feature.status_changed` events of the project whose feature was public
 * (AdminFeatureObject.is_public: the public board listed it) before or after the change, newest
 * first (event time, then insertion order), for features that still exist.
 *
 * After the change: the event's own object. Before: the change's lead event (feature.updated,
 * merged or unmerged, recorded just before it by the same transaction for the same feature:
 * src/routes/features/features.events.ts) lists `is_public` in its `changes` when the change moved
 * it, so the value before is its `from`, or the value after when it did not move.
 *
 * Walks the project's status changes newest first, STATUS_CHANGE_PAGE at a time, through the
 * partial index events_status_changed_idx (migration 2026-11-25T02-25-00; the type is written as
 * a literal so that the index matches under generic plans too), and looks for lead events only
 * for the page's changes that were not public after: however many changes were hidden, a feed
 * costs about the rows it examines, never a sort of every change the project had.
 */
export async function listFeedStatusChanges(db: Db, projectId: number, limit: number): Promise<FeedStatusChangeRow[]> {
  const listed: FeedStatusChangeRow[] = [];
  let cursor: { at: string; seq: string } | null = null;
  while (listed.length < limit) {
    const after: RawBuilder<boolean> =
      cursor === null ? sql<boolean>`true` : sql<boolean>`(e.created_at, e.seq) < (${cursor.at}::timestamptz, ${cursor.seq}::bigint)`;
    const { rows }: { rows: StatusChangeCandidate[] } = await sql<StatusChangeCandidate>`
      SELECT c.txid::text AS txid, c.seq::text AS seq, c.created_at, c.created_at::text AS cursor_at,
        f.id AS feature_id, f.heading,
        c.data->'changes'->'status'->>'from' AS from_status, c.data->'changes'->'status'->>'to' AS to_status,
        f.id IS NOT NULL AND CASE
          WHEN coalesce((c.data->'object'->>'is_public')::boolean, false) THEN true
          ELSE coalesce((
            SELECT (lead.data->'changes'->'is_public'->>'from')::boolean
            FROM events lead
            WHERE lead.txid = c.txid AND lead.seq < c.seq AND lead.project_id = c.project_id
              AND lead.type IN ('feature.updated', 'feature.merged', 'feature.unmerged')
              AND lead.data->'object'->>'id' = c.data->'object'->>'id'
            ORDER BY lead.seq DESC
            LIMIT 1
          ), false)
        END AS listed
      FROM (
        SELECT e.txid, e.seq, e.created_at, e.project_id, e.data
        FROM events e
        WHERE e.project_id = ${projectId} AND e.type = 'feature.status_changed' AND ${after}
        ORDER BY e.created_at DESC, e.seq DESC
        LIMIT ${STATUS_CHANGE_PAGE}
      ) c
      LEFT JOIN features f ON f.project_id = c.project_id AND f.id = (c.data->'object'->>'id')::int
      ORDER BY c.created_at DESC, c.seq DESC`.execute(db);
    for (const row of rows) {
      if (!row.listed || row.feature_id === null || row.heading === null || listed.length >= limit) continue;
      listed.push({
        txid: row.txid,
        seq: row.seq,
        created_at: new Date(row.created_at),
        feature_id: row.feature_id,
        heading: row.heading,
        from_status: row.from_status,
        to_status: row.to_status,
      });
    }
    const last: StatusChangeCandidate | undefined = rows.at(-1);
    if (rows.length < STATUS_CHANGE_PAGE || last === undefined) break;
    cursor = { at: last.cursor_at, seq: last.seq };
  }
  return listed;
}
