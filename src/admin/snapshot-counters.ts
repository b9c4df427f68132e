/**
 * Stored counters of an imported project, recomputed in SQL from its rows (docs/architecture.md,
 * "Data rules"): features.vote_count, weighted_score, trending_score and
 * comment_count, comments.like_count, voters.vote_count and the project's voter count
 * (project_voter_counts, one row per shard), and features.vote_milestone (the vote milestone
 * each feature has passed, src/events/milestones.ts).
 */
import { sql } from "kysely";
import { VOTER_COUNT_SHARDS } from "../../db/schema.ts";
import { milestoneAtOrBelowSql } from "../events/milestones.ts";
import { voteExponent } from "../lib/rules/trending.ts";
import type { Trx } from "./snapshot-chunks.ts";

/**
 * Sets every stored counter of project `projectId` from the rows it holds (call it after the last
 * insert, in the same transaction). trending_score is ln(sum(exp(x))) over the feature's votes,
 * evaluated as max(x) + ln(sum(exp(x - max(x)))) so exp never overflows; features without votes
 * keep NULL, like the live write path, and every other counter keeps its default 0 where nothing
 * is counted.
 */
export async function computeCounters(trx: Trx, projectId: number) {
  const x = voteExponent(sql.ref("created_at"));
  await sql`UPDATE features AS f
    SET vote_count = s.n, weighted_score = s.w, trending_score = s.top + ln(s.spread)
    FROM (
      SELECT feature_id, count(*)::int AS n, sum(weight)::int AS w, max(top) AS top, sum(exp(x - top)) AS spread
      FROM (
        SELECT feature_id, weight, x, max(x) OVER (PARTITION BY feature_id) AS top
        FROM (SELECT feature_id, weight, ${x} AS x FROM votes WHERE project_id = ${projectId}) AS raw
      ) AS v
      GROUP BY feature_id
    ) AS s
    WHERE f.id = s.feature_id`.execute(trx);
  // Milestones the imported counts have passed are not announced later (an import records no events).
  await sql`UPDATE features SET vote_milestone = ${milestoneAtOrBelowSql(sql.ref("vote_count"))}
    WHERE project_id = ${projectId} AND vote_count >= 10`.execute(trx);
  await sql`UPDATE features AS f SET comment_count = s.n
    FROM (SELECT feature_id, count(*)::int AS n FROM comments WHERE project_id = ${projectId} GROUP BY feature_id) AS s
    WHERE f.id = s.feature_id`.execute(trx);
  await sql`UPDATE comments AS c SET like_count = s.n
    FROM (
      SELECT l.comment_id, count(*)::int AS n FROM comment_likes AS l
      JOIN comments AS lc ON lc.id = l.comment_id
      WHERE lc.project_id = ${projectId} GROUP BY l.comment_id
    ) AS s
    WHERE c.id = s.comment_id`.execute(trx);
  await sql`UPDATE voters AS v SET vote_count = s.n
    FROM (SELECT voter_id, count(*)::int AS n FROM votes WHERE project_id = ${projectId} GROUP BY voter_id) AS s
    WHERE v.id = s.voter_id`.execute(trx);
  await sql`DELETE FROM project_voter_counts WHERE project_id = ${projectId}`.execute(trx);
  await sql`INSERT INTO project_voter_counts (project_id, shard, voter_count)
    SELECT ${projectId}::int, voter_id % ${sql.lit(VOTER_COUNT_SHARDS)}, count(DISTINCT voter_id)::int
    FROM votes WHERE project_id = ${projectId} GROUP BY 2`.execute(trx);
}
