/**
 * Indexes for the hot read paths and for project deletion (measured with `npm run bench`).
 *
 * Feature listings: every sort is "pinned first, then the sort key, id breaking ties"; an index
 * whose column order equals that ORDER BY lets a page be read by walking the first rows of the
 * index instead of sorting a whole board. The initial schema covers top, weighted and new per
 * board; this adds trending (NULLS LAST, as the query orders), comments, board (position) and
 * oldest per board, and every sort per project for scope=project listings.
 *
 * Deleting a project (snapshot import --replace) cascades through foreign keys; each deleted
 * voter or feature looks up its referencing rows, which without an index is a scan of the whole
 * table per deleted row (a 100,000-feature project would take hours). Partial where the column is
 * mostly NULL. Frozen once shipped; add a new migration instead.
 */
import { type Kysely, sql } from "kysely";

const sorts = {
  trending: "trending_score DESC NULLS LAST, id DESC",
  comments: "comment_count DESC, id DESC",
  position: "position, id",
  oldest: "created_at, id",
  top: "vote_count DESC, id DESC",
  weighted: "weighted_score DESC, id DESC",
  new: "created_at DESC, id DESC",
} as const;

const perBoard = ["trending", "comments", "position", "oldest"] as const;

const indexes: Record<string, string> = {
  ...Object.fromEntries(perBoard.map((name) => [`features_board_${name}_idx`, `features (board_id, is_pinned DESC, ${sorts[name]})`])),
  ...Object.fromEntries(
    Object.entries(sorts).map(([name, order]) => [`features_project_${name}_idx`, `features (project_id, is_pinned DESC, ${order})`]),
  ),
  comments_voter_idx: "comments (voter_id)",
  comment_likes_voter_idx: "comment_likes (voter_id)",
  features_author_idx: "features (author_voter_id) WHERE author_voter_id IS NOT NULL",
  features_linked_idx: "features (linked_feature_id) WHERE linked_feature_id IS NOT NULL",
  message_dismissals_voter_idx: "message_dismissals (voter_id)",
};

export async function up(db: Kysely<any>): Promise<void> {
  for (const [name, definition] of Object.entries(indexes)) {
    await sql.raw(`CREATE INDEX IF NOT EXISTS ${name} ON ${definition}`).execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const name of Object.keys(indexes)) await sql.raw(`DROP INDEX IF EXISTS ${name}`).execute(db);
}
