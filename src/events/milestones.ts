/**
 * Vote milestones (owner-api-v3.md, "Events": feature.vote_milestone when vote_count reaches
 * 10, 25, 50, 100, 250, 500, 1000, then each 1000, once per threshold). The highest threshold
 * announced is kept in features.vote_milestone (migration 2026-11-23T12-10-00), so a count that
 * drops below a threshold and reaches it again announces nothing the second time.
 */
import { type Expression, type RawBuilder, sql } from "kysely";
import type { NewEvent } from "./outbox.ts";

/** The thresholds below 1000; from 1000 on, every multiple of 1000 is one. */
export const VOTE_MILESTONES_BELOW_1000 = [10, 25, 50, 100, 250, 500] as const;

/** The highest threshold at or below `count` votes, 0 below 10. */
export function milestoneAtOrBelow(count: number): number {
  if (count >= 1000) return Math.floor(count / 1000) * 1000;
  let reached = 0;
  for (const threshold of VOTE_MILESTONES_BELOW_1000) if (count >= threshold) reached = threshold;
  return reached;
}

/** SQL of milestoneAtOrBelow for an integer expression (the importer's and merges' rule). */
export function milestoneAtOrBelowSql(count: Expression<number>): RawBuilder<number> {
  const below = [...VOTE_MILESTONES_BELOW_1000]
    .reverse()
    .map((threshold) => sql`WHEN ${count} >= ${sql.lit(threshold)} THEN ${sql.lit(threshold)}`);
  return sql<number>`(CASE WHEN ${count} >= 1000 THEN ${count} / 1000 * 1000 ${sql.join(below, sql` `)} ELSE 0 END)`;
}

/** SQL: `count` is exactly a threshold (what a single vote, adding 1, can reach). */
export function isVoteMilestoneSql(count: Expression<number>): RawBuilder<boolean> {
  const below = sql.join(VOTE_MILESTONES_BELOW_1000.map((threshold) => sql.lit(threshold)));
  return sql<boolean>`(${count} IN (${below}) OR (${count} >= 1000 AND ${count} % 1000 = 0))`;
}

/**
 * The feature.vote_milestone event of `feature` (its AdminFeatureObject after the change) for
 * `threshold`: changes `{vote_count: {from: threshold - 1, to: threshold}}` as the spec writes it,
 * also when a merge carried the count past the threshold in one step.
 */
export function voteMilestoneEvent(feature: Record<string, unknown>, threshold: number): NewEvent {
  return { type: "feature.vote_milestone", object: feature, changes: { vote_count: { from: threshold - 1, to: threshold } } };
}
