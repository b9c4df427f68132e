/**
 * Stored counters of a bulk-loaded project, computed in SQL from its (staged) rows with the same
 * definitions as src/admin/snapshot-import.ts (computeCounters), plus the check the bench runs
 * after its write phase: every stored counter against a fresh aggregate of the rows.
 */
import { sql as ksql } from "kysely";
import type { Sql, TransactionSql } from "postgres";
import { compileOnlyDatabase } from "../../db/connect.ts";
import { VOTER_COUNT_SHARDS } from "../../db/schema.ts";
import { voteExponent } from "../../src/lib/rules/trending.ts";

/** The trending exponent of votes.created_at as plain SQL text (the formula lives in trending.ts). */
function voteExponentSql(): string {
  const compiled = voteExponent(ksql.ref("created_at")).compile(compileOnlyDatabase());
  // Its parameters are two numeric constants; inline them so the text can be embedded anywhere.
  return compiled.sql.replace(/\$(\d+)/g, (_, i: string) => {
    const value = compiled.parameters[Number(i) - 1];
    if (typeof value !== "number") throw new Error("voteExponent: unexpected parameter");
    return String(value);
  });
}

/** Unindexed staging tables the generator COPYs into; dropped at commit. */
export async function createStaging(trx: TransactionSql): Promise<void> {
  await trx.unsafe(`CREATE TEMP TABLE stage_voters (id int, public_id text, anon_token_hash text, display_name text,
    tier_id int, created_at timestamptz) ON COMMIT DROP`);
  await trx.unsafe(`CREATE TEMP TABLE stage_features (id int, board_id int, column_id int, status text, heading text,
    description text, author_voter_id int, is_approved boolean, is_pinned boolean, position int, progress int,
    view_count int, created_at timestamptz) ON COMMIT DROP`);
  await trx.unsafe(`CREATE TEMP TABLE stage_votes (feature_id int, voter_id int, weight int, created_at timestamptz) ON COMMIT DROP`);
  await trx.unsafe(`CREATE TEMP TABLE stage_comments (id int, feature_id int, parent_id int, voter_id int, content text,
    created_at timestamptz) ON COMMIT DROP`);
  await trx.unsafe(`CREATE TEMP TABLE stage_likes (comment_id int, voter_id int) ON COMMIT DROP`);
}

/**
 * The foreign keys of the loaded rows, checked in bulk (anti-joins) because the load runs with
 * session_replication_role = replica, which skips the per-row FK triggers (as pg_restore
 * --disable-triggers does); throws naming the first broken reference.
 */
export async function assertReferences(trx: TransactionSql, projectId: number): Promise<void> {
  const checks: [string, string][] = [
    ["votes.feature_id", "SELECT 1 FROM votes v LEFT JOIN features f ON f.id = v.feature_id WHERE v.project_id = $1 AND f.id IS NULL"],
    ["votes.voter_id", "SELECT 1 FROM votes v LEFT JOIN voters o ON o.id = v.voter_id WHERE v.project_id = $1 AND o.id IS NULL"],
    [
      "features.author_voter_id",
      "SELECT 1 FROM features f LEFT JOIN voters o ON o.id = f.author_voter_id WHERE f.project_id = $1 AND f.author_voter_id IS NOT NULL AND o.id IS NULL",
    ],
    [
      "features.column_id",
      "SELECT 1 FROM features f LEFT JOIN columns c ON c.id = f.column_id WHERE f.project_id = $1 AND f.column_id IS NOT NULL AND c.id IS NULL",
    ],
    [
      "comments.feature_id",
      "SELECT 1 FROM comments c LEFT JOIN features f ON f.id = c.feature_id WHERE c.project_id = $1 AND f.id IS NULL",
    ],
    ["comments.voter_id", "SELECT 1 FROM comments c LEFT JOIN voters o ON o.id = c.voter_id WHERE c.project_id = $1 AND o.id IS NULL"],
    [
      "comments.parent_id",
      "SELECT 1 FROM comments c LEFT JOIN comments p ON p.id = c.parent_id WHERE c.project_id = $1 AND c.parent_id IS NOT NULL AND p.id IS NULL",
    ],
    [
      "comment_likes.comment_id",
      "SELECT 1 FROM stage_likes l LEFT JOIN comments c ON c.id = l.comment_id AND c.project_id = $1 WHERE c.id IS NULL",
    ],
    [
      "comment_likes.voter_id",
      "SELECT 1 FROM comment_likes l JOIN comments c ON c.id = l.comment_id LEFT JOIN voters o ON o.id = l.voter_id WHERE c.project_id = $1 AND o.id IS NULL",
    ],
  ];
  for (const [name, query] of checks) {
    const rows = await trx.unsafe(`${query} LIMIT 1`, [projectId]);
    if (rows.length > 0) throw new Error(`generator bug: ${name} references a missing row`);
  }
}

async function step(label: string, run: () => Promise<{ count: number }>): Promise<void> {
  const started = performance.now();
  const { count } = await run();
  const seconds = (performance.now() - started) / 1000;
  process.stderr.write(
    `  ${label.padEnd(40)} ${count.toLocaleString("en-US").padStart(9)} rows ` +
      `${Math.round(count / Math.max(seconds, 1e-3)).toLocaleString("en-US")} rows/s ${seconds.toFixed(1)} s\n`,
  );
}

/**
 * Moves the staged rows into the real tables with their stored counters computed in SQL from
 * the staged rows, with the importer's definitions (snapshot-import.ts computeCounters):
 * vote_count = votes, weighted_score = sum of weights, trending_score = ln(sum(exp(x))) over the
 * votes (NULL without votes), comment_count = comments incl. replies, like_count = likes,
 * voters.vote_count = the voter's votes, project_voter_counts = distinct voters with a vote per
 * shard (voter_id % VOTER_COUNT_SHARDS).
 * Computing before inserting (rather than updating after) spares 100,000 non-HOT row updates,
 * each of which would re-enter the trigram index.
 */
export async function insertWithCounters(trx: TransactionSql, projectId: number): Promise<void> {
  const x = voteExponentSql();
  await trx`SET LOCAL session_replication_role = replica`;
  await trx.unsafe("ANALYZE stage_voters, stage_features, stage_votes, stage_comments, stage_likes");
  await step("voters + vote_count", () =>
    trx.unsafe(
      `
    INSERT INTO voters (id, public_id, project_id, kind, anon_token_hash, display_name, tier_id, vote_count, created_at, updated_at)
    SELECT v.id, v.public_id, $1, 'anonymous', v.anon_token_hash, v.display_name, v.tier_id, coalesce(n.n, 0), v.created_at, v.created_at
    FROM stage_voters AS v
    LEFT JOIN (SELECT voter_id, count(*)::int AS n FROM stage_votes GROUP BY voter_id) AS n ON n.voter_id = v.id
    ORDER BY v.id`,
      [projectId],
    ),
  );
  await step("features + vote/score/trending/comment", () =>
    trx.unsafe(
      `
    INSERT INTO features (id, project_id, board_id, column_id, status, heading, description, author_voter_id, is_approved,
      is_pinned, position, progress, view_count, vote_count, weighted_score, trending_score, comment_count, created_at, updated_at)
    SELECT f.id, $1, f.board_id, f.column_id, f.status, f.heading, f.description, f.author_voter_id, f.is_approved,
      f.is_pinned, f.position, f.progress, f.view_count, coalesce(v.n, 0), coalesce(v.w, 0), v.top + ln(v.spread),
      coalesce(c.n, 0), f.created_at, f.created_at
    FROM stage_features AS f
    LEFT JOIN (
      SELECT feature_id, count(*)::int AS n, sum(weight)::int AS w, max(top) AS top, sum(exp(x - top)) AS spread
      FROM (SELECT feature_id, weight, x, max(x) OVER (PARTITION BY feature_id) AS top
            FROM (SELECT feature_id, weight, ${x} AS x FROM stage_votes) AS raw) AS e
      GROUP BY feature_id
    ) AS v ON v.feature_id = f.id
    LEFT JOIN (SELECT feature_id, count(*)::int AS n FROM stage_comments GROUP BY feature_id) AS c ON c.feature_id = f.id
    ORDER BY f.id`,
      [projectId],
    ),
  );
  await step("votes", () =>
    trx.unsafe(
      `INSERT INTO votes (feature_id, voter_id, project_id, weight, created_at)
    SELECT feature_id, voter_id, $1, weight, created_at FROM stage_votes`,
      [projectId],
    ),
  );
  await step("comments + like_count", () =>
    trx.unsafe(
      `
    INSERT INTO comments (id, project_id, feature_id, parent_id, voter_id, content, like_count, created_at)
    SELECT c.id, $1, c.feature_id, c.parent_id, c.voter_id, c.content, coalesce(l.n, 0), c.created_at
    FROM stage_comments AS c
    LEFT JOIN (SELECT comment_id, count(*)::int AS n FROM stage_likes GROUP BY comment_id) AS l ON l.comment_id = c.id
    ORDER BY c.id`,
      [projectId],
    ),
  );
  await step("comment_likes", () =>
    trx.unsafe(`INSERT INTO comment_likes (comment_id, voter_id) SELECT comment_id, voter_id FROM stage_likes`),
  );
  await step("foreign keys checked in bulk", async () => {
    await assertReferences(trx, projectId);
    return { count: 0 };
  });
  await trx`SET LOCAL session_replication_role = DEFAULT`;
  // Aggregates other migrations keep by trigger (skipped above) are rebuilt by their own function.
  const [rebuild] = await trx`SELECT to_regproc('rebuild_feature_tier_votes') IS NOT NULL AS present`;
  if (rebuild?.present) {
    await step("feature_tier_votes rebuilt", async () => {
      await trx`SELECT rebuild_feature_tier_votes(${projectId}::int)`;
      return { count: 0 };
    });
  }
  const [search] = await trx`SELECT to_regproc('rebuild_feature_search') IS NOT NULL AS present`;
  if (search?.present) {
    await step("feature_search rebuilt", async () => {
      await trx`SELECT rebuild_feature_search(${projectId}::int)`;
      return { count: 0 };
    });
  }
  await step(
    "project_voter_counts",
    () => trx`INSERT INTO project_voter_counts (project_id, shard, voter_count)
    SELECT ${projectId}::int, voter_id % ${VOTER_COUNT_SHARDS}::int, count(DISTINCT voter_id)::int
    FROM votes WHERE project_id = ${projectId} GROUP BY 2`,
  );
}

export interface CounterCheck {
  /** Mismatches of the integer counters against COUNT(*) / SUM() of their rows (empty: exact). */
  exact: string[];
  /** Features whose trending_score is off a recomputation from their votes by more than 1e-6. */
  trendingOff: number;
  trendingExamples: string[];
}

/**
 * Every stored counter of a project against a fresh aggregate of its rows: vote_count,
 * weighted_score, comment_count, like_count, voters.vote_count, projects.voter_count exactly;
 * trending_score (a float, ln of a sum of exponentials) within 1e-6, reported apart.
 */
export async function checkCounters(sql: Sql, projectId: number): Promise<CounterCheck> {
  const x = voteExponentSql();
  const exact = await sql.unsafe<{ problem: string }[]>(
    `
    SELECT 'feature ' || f.id || ': vote_count ' || f.vote_count || ' vs ' || coalesce(v.n, 0)
      || ', weighted_score ' || f.weighted_score || ' vs ' || coalesce(v.w, 0) AS problem
    FROM features AS f
    LEFT JOIN (SELECT feature_id, count(*)::int AS n, sum(weight)::int AS w FROM votes WHERE project_id = $1 GROUP BY feature_id) AS v
      ON v.feature_id = f.id
    WHERE f.project_id = $1 AND (f.vote_count <> coalesce(v.n, 0) OR f.weighted_score <> coalesce(v.w, 0))
    UNION ALL
    SELECT 'feature ' || f.id || ': comment_count ' || f.comment_count || ' vs ' || coalesce(c.n, 0)
    FROM features AS f
    LEFT JOIN (SELECT feature_id, count(*)::int AS n FROM comments WHERE project_id = $1 GROUP BY feature_id) AS c
      ON c.feature_id = f.id
    WHERE f.project_id = $1 AND f.comment_count <> coalesce(c.n, 0)
    UNION ALL
    SELECT 'comment ' || cm.id || ': like_count ' || cm.like_count || ' vs ' || coalesce(l.n, 0)
    FROM comments AS cm
    LEFT JOIN (SELECT comment_id, count(*)::int AS n FROM comment_likes GROUP BY comment_id) AS l ON l.comment_id = cm.id
    WHERE cm.project_id = $1 AND cm.like_count <> coalesce(l.n, 0)
    UNION ALL
    SELECT 'voter ' || vo.id || ': vote_count ' || vo.vote_count || ' vs ' || coalesce(s.n, 0)
    FROM voters AS vo
    LEFT JOIN (SELECT voter_id, count(*)::int AS n FROM votes WHERE project_id = $1 GROUP BY voter_id) AS s
      ON s.voter_id = vo.id
    WHERE vo.project_id = $1 AND vo.vote_count <> coalesce(s.n, 0)
    UNION ALL
    SELECT 'project: voter_count shard ' || coalesce(c.shard, d.shard) || ' ' || coalesce(c.voter_count, 0) || ' vs ' || coalesce(d.n, 0)
    FROM (SELECT shard::int, voter_count FROM project_voter_counts WHERE project_id = $1) AS c
    FULL JOIN (SELECT voter_id % ${VOTER_COUNT_SHARDS} AS shard, count(DISTINCT voter_id)::int AS n
      FROM votes WHERE project_id = $1 GROUP BY 1) AS d ON d.shard = c.shard
    WHERE coalesce(c.voter_count, 0) <> coalesce(d.n, 0)
    LIMIT 20`,
    [projectId],
  );
  const trending = await sql.unsafe<{ problem: string; off: number }[]>(
    `
    SELECT count(*) OVER ()::int AS off, 'feature ' || f.id || ' (' || f.vote_count || ' votes): '
      || coalesce(f.trending_score::text, 'null') || ' vs ' || coalesce((v.top + ln(v.spread))::text, 'null') AS problem
    FROM features AS f
    LEFT JOIN (
      SELECT feature_id, max(top) AS top, sum(exp(x - top)) AS spread
      FROM (SELECT feature_id, x, max(x) OVER (PARTITION BY feature_id) AS top
            FROM (SELECT feature_id, ${x} AS x FROM votes WHERE project_id = $1) AS raw) AS e
      GROUP BY feature_id
    ) AS v ON v.feature_id = f.id
    WHERE f.project_id = $1 AND ((f.trending_score IS NULL) <> (v.top IS NULL)
      OR abs(f.trending_score - (v.top + ln(v.spread))) > 1e-6)
    LIMIT 3`,
    [projectId],
  );
  return {
    exact: exact.map((row) => row.problem),
    trendingOff: trending[0]?.off ?? 0,
    trendingExamples: trending.map((row) => row.problem),
  };
}
