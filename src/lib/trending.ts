/**
 * Trending score (the contract leaves the formula open; README "Choices"): every vote is worth
 * 2^(age / half-life), so a vote loses half its weight every TRENDING_HALF_LIFE_DAYS. Instead of
 * decaying every row over time we store ln(sum of exp(x_i)) where x_i is the vote's time in
 * decay units since a fixed epoch; ordering by that stored value equals ordering by the decayed
 * sum at any instant, so a write keeps it exact and an index serves the sort.
 */
import { sql, type RawBuilder } from "kysely";

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
 * trending_score after removing a vote with exponent x; NULL once no votes are left or when
 * rounding leaves nothing measurable.
 */
export function removeVoteFromTrending(x: RawBuilder<number>, remainingVotes: RawBuilder<number>) {
  return sql<number | null>`CASE WHEN ${remainingVotes} <= 0 OR trending_score IS NULL THEN NULL
    WHEN 1 - exp(${x} - trending_score) <= 1e-12 THEN NULL
    ELSE trending_score + ln(1 - exp(${x} - trending_score)) END`;
}
