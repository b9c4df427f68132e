/**
 * Casting and withdrawing votes (contract, "Taking part" rule 2). Each is one transaction in
 * which the vote row and every counter it moves change together, by SQL increments guarded by
 * the votes primary key (feature_id, voter_id): features.vote_count / weighted_score /
 * trending_score, voters.vote_count, and projects.voter_count when a voter's first vote
 * arrives or last vote leaves. Locks are taken in one order (feature, voter, project), so
 * concurrent votes queue on the feature row instead of deadlocking.
 */
import { sql, type Transaction } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { Database } from "../../../db/schema.ts";
import { addVoteToTrending, removeVoteFromTrending, voteExponent } from "../../lib/trending.ts";

export interface VoteTarget {
  projectId: number;
  featureId: number;
  /** Internal voter row id. */
  voterId: number;
}

/** The feature's stored counters after the change. */
export interface FeatureCounters {
  vote_count: number;
  weighted_score: number;
}

/**
 * Records the vote with weight = the voter's tier multiplier (1 without a tier), cast at
 * `now`. Returns the feature's new counters, or undefined when the voter had voted already
 * (nothing changed).
 */
export async function addVote(db: Db, target: VoteTarget, now: Date): Promise<FeatureCounters | undefined> {
  return db.transaction().execute(async (trx) => {
    const vote = await trx
      .insertInto("votes")
      .values({
        feature_id: target.featureId,
        voter_id: target.voterId,
        project_id: target.projectId,
        weight: sql<number>`coalesce((SELECT tiers.multiplier FROM voters JOIN tiers ON tiers.id = voters.tier_id
          WHERE voters.id = ${target.voterId}), 1)`,
        created_at: now,
      })
      .onConflict((oc) => oc.columns(["feature_id", "voter_id"]).doNothing())
      // The exponent is taken from the stored timestamp so a withdrawal removes exactly it.
      .returning(["weight", voteExponent(sql.ref("created_at")).as("x")])
      .executeTakeFirst();
    if (!vote) return undefined;
    const counters = await trx
      .updateTable("features")
      .set((eb) => ({
        vote_count: eb("vote_count", "+", 1),
        weighted_score: eb("weighted_score", "+", vote.weight),
        trending_score: addVoteToTrending(sql<number>`${vote.x}::float8`),
      }))
      .where("id", "=", target.featureId)
      .returning(["vote_count", "weighted_score"])
      .executeTakeFirstOrThrow();
    await moveVoterTally(trx, target, 1);
    return counters;
  });
}

/**
 * Removes the voter's vote and takes back exactly what it added. Returns the feature's new
 * counters, or undefined when the voter had no vote on it (nothing changed).
 */
export async function removeVote(db: Db, target: VoteTarget): Promise<FeatureCounters | undefined> {
  return db.transaction().execute(async (trx) => {
    const vote = await trx
      .deleteFrom("votes")
      .where("feature_id", "=", target.featureId)
      .where("voter_id", "=", target.voterId)
      .returning(["weight", voteExponent(sql.ref("created_at")).as("x")])
      .executeTakeFirst();
    if (!vote) return undefined;
    const counters = await trx
      .updateTable("features")
      .set((eb) => ({
        vote_count: eb("vote_count", "-", 1),
        weighted_score: eb("weighted_score", "-", vote.weight),
        // SET sees the row before the update, so the votes left are vote_count - 1.
        trending_score: removeVoteFromTrending(sql<number>`${vote.x}::float8`, sql<number>`vote_count - 1`),
      }))
      .where("id", "=", target.featureId)
      .returning(["vote_count", "weighted_score"])
      .executeTakeFirstOrThrow();
    await moveVoterTally(trx, target, -1);
    return counters;
  });
}

/**
 * Moves the voter's vote_count by `delta` and, when the voter just gained a first vote or lost
 * the last one, the project's voter_count with it. Runs after the feature row is locked, so the
 * lock order stays feature -> voter -> project and parallel votes cannot deadlock.
 */
async function moveVoterTally(trx: Transaction<Database>, target: VoteTarget, delta: 1 | -1): Promise<void> {
  const voter = await trx
    .updateTable("voters")
    .set((eb) => ({ vote_count: eb("vote_count", "+", delta) }))
    .where("id", "=", target.voterId)
    .returning("vote_count")
    .executeTakeFirstOrThrow();
  const crossedZero = delta === 1 ? voter.vote_count === 1 : voter.vote_count === 0;
  if (!crossedZero) return;
  await trx
    .updateTable("projects")
    .set((eb) => ({ voter_count: eb("voter_count", "+", delta) }))
    .where("id", "=", target.projectId)
    .execute();
}
