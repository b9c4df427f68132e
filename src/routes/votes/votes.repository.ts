/**
 * Casting and withdrawing votes (contract, "Taking part" rule 2). Each is one transaction in
 * which the vote row and every counter it moves change together, by SQL increments guarded by
 * the votes primary key (feature_id, voter_id): features.vote_count / weighted_score /
 * trending_score, voters.vote_count, and projects.voter_count when a voter's first vote
 * arrives or last vote leaves. Locks are taken in one order (feature, voter, project), so
 * concurrent votes queue on the feature row instead of deadlocking. Each is a single statement
 * (data-modifying CTEs), hence one round trip.
 */
import { type Kysely, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { Database } from "../../../db/schema.ts";
import { addVoteToTrending, recomputedTrending, removeVoteFromTrending, voteExponent } from "../../lib/trending.ts";

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
  return db
    .with("vote", (q) =>
      q
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
        .returning(["weight", voteExponent(sql.ref("created_at")).as("x")]),
    )
    .with("feature", (q) =>
      q
        .updateTable("features")
        .from("vote")
        .set((eb) => ({
          vote_count: eb("features.vote_count", "+", 1),
          weighted_score: eb("features.weighted_score", "+", eb.ref("vote.weight")),
          trending_score: addVoteToTrending(sql<number>`${sql.ref("vote.x")}`),
        }))
        .where("features.id", "=", target.featureId)
        .returning(["features.vote_count", "features.weighted_score"]),
    )
    .with("voter", (q) => moveVoterCount(q, target, 1))
    .with("project", (q) => moveVoterCountOfProject(q, target, 1))
    .selectFrom("feature")
    .select(["feature.vote_count", "feature.weighted_score"])
    .executeTakeFirst();
}

/**
 * Removes the voter's vote and takes back exactly what it added. Returns the feature's new
 * counters, or undefined when the voter had no vote on it (nothing changed).
 */
export async function removeVote(db: Db, target: VoteTarget): Promise<FeatureCounters | undefined> {
  return db
    .with("vote", (q) =>
      q
        .deleteFrom("votes")
        .where("feature_id", "=", target.featureId)
        .where("voter_id", "=", target.voterId)
        .returning(["weight", voteExponent(sql.ref("created_at")).as("x")]),
    )
    .with("feature", (q) =>
      q
        .updateTable("features")
        .from("vote")
        .set((eb) => ({
          vote_count: eb("features.vote_count", "-", 1),
          weighted_score: eb("features.weighted_score", "-", eb.ref("vote.weight")),
          // SET sees the row before the update, so the votes left are vote_count - 1.
          trending_score: removeVoteFromTrending(
            sql<number>`${sql.ref("vote.x")}`,
            sql<number>`features.vote_count - 1`,
            recomputedTrending(target.featureId, target.voterId),
          ),
        }))
        .where("features.id", "=", target.featureId)
        .returning(["features.vote_count", "features.weighted_score"]),
    )
    .with("voter", (q) => moveVoterCount(q, target, -1))
    .with("project", (q) => moveVoterCountOfProject(q, target, -1))
    .selectFrom("feature")
    .select(["feature.vote_count", "feature.weighted_score"])
    .executeTakeFirst();
}

// Cast and withdraw are each one statement: the vote row and every counter it moves change
// together (a statement is atomic), in one round trip instead of five (BEGIN, three or four
// statements, COMMIT), which also shortens how long the feature row stays locked. Each step
// reads the one before it (vote -> feature -> voter -> project), so a step runs only when the
// vote row really changed, and rows are locked in the order feature, voter, project.
type FeatureStep = { vote_count: number; weighted_score: number };

/** Moves the voter's vote_count by `delta` once the feature row has been updated. */
function moveVoterCount<Q extends { updateTable: Db["updateTable"] }>(q: Q, target: VoteTarget, delta: 1 | -1) {
  return (q as unknown as QueryWithFeature)
    .updateTable("voters")
    .from("feature")
    .set((eb) => ({ vote_count: eb("voters.vote_count", "+", delta) }))
    .where("voters.id", "=", target.voterId)
    .returning("voters.vote_count");
}

/** Moves the project's voter_count by `delta` when the voter just gained a first vote or lost the last. */
function moveVoterCountOfProject<Q extends { updateTable: Db["updateTable"] }>(q: Q, target: VoteTarget, delta: 1 | -1) {
  return (q as unknown as QueryWithVoter)
    .updateTable("projects")
    .from("voter")
    .set((eb) => ({ voter_count: eb("projects.voter_count", "+", delta) }))
    .where("projects.id", "=", target.projectId)
    .where("voter.vote_count", "=", delta === 1 ? 1 : 0)
    .returning("projects.id");
}

type QueryWithFeature = Kysely<Database & { feature: FeatureStep }>;
type QueryWithVoter = Kysely<Database & { feature: FeatureStep; voter: { vote_count: number } }>;
