/**
 * The stored counters must equal the rows that exist (docs/architecture.md, "Data rules"): checked
 * in SQL
 * over one project, so that a lost update, a half-written transaction or a double count shows.
 */
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";

export interface CounterMismatch {
  what: string;
  id: number;
  stored: number;
  actual: number;
}

/** Every counter of the project whose stored value differs from its rows (empty when exact). */
export async function counterMismatches(db: Db, slug: string): Promise<CounterMismatch[]> {
  const { rows } = await sql<CounterMismatch>`
    WITH p AS (SELECT id FROM projects WHERE slug = ${slug})
    SELECT 'features.vote_count' AS what, f.id, f.vote_count AS stored,
           (SELECT count(*)::int FROM votes v WHERE v.feature_id = f.id) AS actual
      FROM features f, p WHERE f.project_id = p.id
    UNION ALL
    SELECT 'features.weighted_score', f.id, f.weighted_score,
           (SELECT coalesce(sum(v.weight), 0)::int FROM votes v WHERE v.feature_id = f.id)
      FROM features f, p WHERE f.project_id = p.id
    UNION ALL
    SELECT 'features.comment_count', f.id, f.comment_count,
           (SELECT count(*)::int FROM comments c WHERE c.feature_id = f.id)
      FROM features f, p WHERE f.project_id = p.id
    UNION ALL
    SELECT 'voters.vote_count', vr.id, vr.vote_count,
           (SELECT count(*)::int FROM votes v WHERE v.voter_id = vr.id)
      FROM voters vr, p WHERE vr.project_id = p.id
    UNION ALL
    SELECT 'comments.like_count', c.id, c.like_count,
           (SELECT count(*)::int FROM comment_likes l WHERE l.comment_id = c.id)
      FROM comments c, p WHERE c.project_id = p.id
  `.execute(db);
  return rows.filter((row) => Number(row.stored) !== Number(row.actual));
}
