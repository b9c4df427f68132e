/**
 * Trending score (the contract leaves the formula open; docs/decisions.md): every vote is worth
 * 2^(age / half-life), so a vote loses half its weight every TRENDING_HALF_LIFE_DAYS. Instead of
 * decaying every row over time we store ln(sum of exp(x_i)) where x_i is the vote's time in
 * decay units since a fixed epoch; ordering by that stored value equals ordering by the decayed
 * sum at any instant, so a write keeps it exact and an index serves the sort.
 */
import { type RawBuilder, sql } from "kysely";

export const TRENDING_HALF_LIFE_DAYS = 3;
const EPOCH_SECONDS = Date.UTC(2024, 0, 1) / 1000;
const DECAY_SECONDS = (TRENDING_HALF_LIFE_DAYS * 86400) / Math.LN2;

/** x for a vote cast at `column` (a timestamptz SQL expression). */
export function voteExponent(column: RawBuilder<unknown> | ReturnType<typeof sql.ref>) {
  return sql<number>`((extract(epoch from ${column}) - ${EPOCH_SECONDS}) / ${DECAY_SECONDS})::float8`;
}

/** trending_score after adding a vote with exponent x (log-sum-exp, overflow safe). */
export function addVoteToTrending(x: RawBuilder<number>) {
  return sql<number>`CASE WHEN trending_score IS NULL THEN ${x}
    ELSE greatest(trending_score, ${x}) + ln(1 + exp(-abs(trending_score - ${x}))) END`;
}

/**
 * ln(sum(exp(x))) over the votes `where` selects (log-sum-exp shifted by the largest exponent);
 * NULL when it selects none.
 */
function trendingOfVotes(where: RawBuilder<unknown>) {
  return sql<number | null>`(SELECT max(v.mx) + ln(sum(exp(v.x - v.mx))) FROM (
      SELECT ${voteExponent(sql.ref("created_at"))} AS x, max(${voteExponent(sql.ref("created_at"))}) OVER () AS mx
      FROM votes WHERE ${where}) v)`;
}

/**
 * trending_score recomputed from the votes of `featureId` other than `exceptVoterId`'s (SQL
 * values, e.g. parameters); NULL when no such vote exists. Used where a subtraction would cancel
 * out (a withdrawal removing the vote that carried nearly all of the sum); inside the withdrawing
 * statement the deleted row may still be visible, hence the exclusion. Runs
 * fb_trending_of_votes (migration 2026-11-27T20-00-00), whose query takes a fresh snapshot when
 * it runs, after the statement holds the feature's row lock: a subquery would read the votes as
 * of the statement's start, before a concurrent vote or withdrawal committed.
 */
export function recomputedTrending(featureId: unknown, exceptVoterId: unknown) {
  return sql<
    number | null
  >`fb_trending_of_votes(${featureId}::int, ${exceptVoterId}::int, ${EPOCH_SECONDS}::float8, ${DECAY_SECONDS}::float8)`;
}

/**
 * trending_score of the feature `featureId` (an SQL expression, e.g. a column reference) from
 * all of the votes it holds when the expression runs: what owner changes that move or remove many
 * votes at once (merge, unmerge, voter erasure, run after the votes were deleted) store.
 */
export function trendingFromVotes(featureId: RawBuilder<unknown> | ReturnType<typeof sql.ref>) {
  return trendingOfVotes(sql`votes.feature_id = ${featureId}`);
}

/**
 * trending_score after removing a vote with exponent x; NULL once no votes are left. When the
 * removed vote carried nearly all of the sum (older votes have decayed to a millionth of it),
 * ln(1 - e^(x - s)) would cancel to nothing and lose the older votes, so the score is
 * recomputed from the remaining votes instead (`recomputed`, see recomputedTrending).
 */
export function removeVoteFromTrending(x: RawBuilder<number>, remainingVotes: RawBuilder<number>, recomputed: RawBuilder<number | null>) {
  return sql<number | null>`CASE WHEN ${remainingVotes} <= 0 THEN NULL
    WHEN trending_score IS NULL OR 1 - exp(${x} - trending_score) <= 1e-6 THEN ${recomputed}
    ELSE trending_score + ln(1 - exp(${x} - trending_score)) END`;
}
