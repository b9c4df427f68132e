/**
 * Every stored counter of one project against COUNT / SUM of its rows (owner-api-v3.md, "Common
 * rules": every stored counter stays equal to what its rows say): features' vote_count,
 * weighted_score, comment_count and trending_score (recomputed as in src/lib/rules/trending.ts, within
 * 1e-6), comments' like_count, voters' vote_count, the project's voter count (sum of
 * project_voter_counts = distinct voters with a vote) and feature_tier_votes (as
 * rebuild_feature_tier_votes would compute them). Empty when exact.
 */
import { sql } from "kysely";
import type { Db } from "../../db/connect.ts";
import { trendingFromVotes } from "../../src/lib/rules/trending.ts";

export async function counterProblems(db: Db, projectId: number): Promise<string[]> {
  const { rows } = await sql<{ problem: string }>`
    SELECT 'feature ' || f.id || ' vote_count ' || f.vote_count || ' vs ' || (SELECT count(*) FROM votes v WHERE v.feature_id = f.id) AS problem
      FROM features f WHERE f.project_id = ${projectId} AND f.vote_count <> (SELECT count(*) FROM votes v WHERE v.feature_id = f.id)
    UNION ALL
    SELECT 'feature ' || f.id || ' weighted_score ' || f.weighted_score
      FROM features f WHERE f.project_id = ${projectId} AND f.weighted_score <> (SELECT coalesce(sum(v.weight), 0) FROM votes v WHERE v.feature_id = f.id)
    UNION ALL
    SELECT 'feature ' || f.id || ' comment_count ' || f.comment_count
      FROM features f WHERE f.project_id = ${projectId} AND f.comment_count <> (SELECT count(*) FROM comments c WHERE c.feature_id = f.id)
    UNION ALL
    SELECT 'feature ' || f.id || ' trending_score ' || coalesce(f.trending_score::text, 'null') || ' vs ' || coalesce(t.score::text, 'null')
      FROM features f CROSS JOIN LATERAL (SELECT ${trendingFromVotes(sql.ref("f.id"))} AS score) t
      WHERE f.project_id = ${projectId} AND ((f.trending_score IS NULL) <> (t.score IS NULL) OR abs(f.trending_score - t.score) > 1e-6)
    UNION ALL
    SELECT 'comment ' || c.id || ' like_count ' || c.like_count
      FROM comments c WHERE c.project_id = ${projectId} AND c.like_count <> (SELECT count(*) FROM comment_likes l WHERE l.comment_id = c.id)
    UNION ALL
    SELECT 'voter ' || r.id || ' vote_count ' || r.vote_count
      FROM voters r WHERE r.project_id = ${projectId} AND r.vote_count <> (SELECT count(*) FROM votes v WHERE v.voter_id = r.id)
    UNION ALL
    SELECT 'project voter_count ' || s.n || ' vs ' || d.n
      FROM (SELECT coalesce(sum(voter_count), 0) AS n FROM project_voter_counts WHERE project_id = ${projectId}) s,
           (SELECT count(DISTINCT voter_id) AS n FROM votes WHERE project_id = ${projectId}) d
      WHERE s.n <> d.n
    UNION ALL
    SELECT 'feature_tier_votes ' || coalesce(a.feature_id, b.feature_id) || '/' || coalesce(a.tier_id, b.tier_id)
      FROM (SELECT feature_id, tier_id, votes, churned, billed, override_cents::bigint AS cents FROM feature_tier_votes
            WHERE project_id = ${projectId} AND votes <> 0) a
      FULL JOIN (SELECT v.feature_id, vr.tier_id, count(*)::int AS votes, (count(*) FILTER (WHERE vr.churned))::int AS churned,
              (count(*) FILTER (WHERE NOT vr.churned AND vr.mrr_override_cents IS NULL))::int AS billed,
              coalesce(sum(vr.mrr_override_cents) FILTER (WHERE NOT vr.churned), 0)::bigint AS cents
            FROM votes v JOIN voters vr ON vr.id = v.voter_id
            WHERE v.project_id = ${projectId} AND vr.tier_id IS NOT NULL GROUP BY 1, 2) b
        ON a.feature_id = b.feature_id AND a.tier_id = b.tier_id
      WHERE a.votes IS DISTINCT FROM b.votes OR a.churned IS DISTINCT FROM b.churned OR a.billed IS DISTINCT FROM b.billed
        OR a.cents IS DISTINCT FROM b.cents
  `.execute(db);
  return rows.map((row) => row.problem);
}

/** The project row id of `slug`. */
export async function projectIdOf(db: Db, slug: string): Promise<number> {
  const row = await db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirstOrThrow();
  return row.id;
}
