/**
 * Casting and withdrawing votes (contract, "Taking part" rule 2). Each is one statement
 * (data-modifying CTEs, hence one round trip and atomic) that checks the feature is visible to
 * the voter (features.visibility.ts), changes the vote row, and moves every counter the vote
 * moves by SQL increments guarded by the votes primary key (feature_id, voter_id):
 * features.vote_count / weighted_score / trending_score, voters.vote_count, and the project's
 * voter count (the voter's shard row of project_voter_counts) when a voter's first vote arrives
 * or last vote leaves. Locks are taken in one order (feature, voter, voter-count shard), the
 * feature row first of all (lockedVisibleFeature), so concurrent votes and owner changes queue
 * on the feature row instead of deadlocking. Both statements are QueryTemplates: compiled once
 * per visibility shape. Each is one statement (one round trip) that takes the project's write lock
 * in shared mode before any row lock (sharedProjectWriteLock), so a vote never races a replace.
 *
 * Events (owner-api-v3.md, "Events"): each statement also inserts its vote.created / vote.deleted
 * row into the outbox (a data-modifying CTE reading the voter step, so only a vote that changed
 * something records one, and it commits or rolls back with the vote). A cast that brings
 * vote_count to a milestone not yet announced (src/events/milestones.ts) raises
 * features.vote_milestone and inserts feature.vote_milestone in the same INSERT, after the
 * vote's event, with the AdminFeatureObject built in SQL (features.events.ts
 * adminFeatureJsonSql; its subquery runs only for such a vote).
 *
 * Subscriptions (engagement-api-v3.md, "Subscriptions" rules 1-2): a cast that inserted its vote
 * row also subscribes the voter to the feature (reason `vote`) in the same statement, unless they
 * hold a row for it already (an earlier subscription keeps its reason and time; an opt-out stays).
 * A withdrawal leaves the subscription as it is.
 */
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import { QueryTemplate } from "../../../db/query-template.ts";
import { type Database, type ProjectSettings, VOTER_COUNT_SHARDS } from "../../../db/schema.ts";
import { isVoteMilestoneSql } from "../../events/milestones.ts";
import { answeringVanishedRows, sharedProjectWriteLock, waitingOutReplace } from "../../lib/data/project-write-lock.ts";
import { voteSubscriptionInsert } from "../../lib/data/subscriptions.ts";
import { retryingConflicts } from "../../lib/data/transaction.ts";
import { addVoteToTrending, recomputedTrending, removeVoteFromTrending, voteExponent } from "../../lib/rules/trending.ts";
import { adminFeatureJsonSql, visibilityShapeKey, visibleFeatureQuery } from "../features/index.ts";

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
 * What a changed vote moved besides the counters, for the shared read cache
 * (src/lib/data/read-dependencies.ts): the feature's trending_score after it (null once it holds
 * no vote) and whether the project's voter count moved (the voter's first vote or last
 * withdrawal), both as the statement wrote them; and where the feature stands (board, column,
 * status, tag ids ascending), as committed once the statement held the feature's row lock.
 */
export interface VoteMoves {
  trending_score: number | null;
  voter_count_moved: boolean;
  board_id: number;
  column_id: number | null;
  status: string;
  tag_ids: number[];
}

/**
 * What a cast or withdrawal did: `hidden` (no such feature in the project, or not visible to
 * the voter), `not_votable` (cast only: the column takes no votes or the project allows no
 * voting), `unchanged` (already voted / no vote to withdraw), or `changed` with the counters.
 */
export type VoteOutcome =
  | { kind: "hidden" }
  | { kind: "not_votable" }
  | { kind: "unchanged" }
  | { kind: "changed"; counters: FeatureCounters; moves: VoteMoves };

interface VoteValues {
  projectId: number;
  featureId: number;
  voterId: number;
  allowVoting: boolean;
}

/** One row when the feature is visible; the counters are null when no vote row changed. */
interface OutcomeRow {
  is_votable: boolean;
  vote_count: number | null;
  weighted_score: number | null;
  trending_score: number | null;
  voter_count_moved: boolean;
  board_id: number;
  column_id: number | null;
  status: string;
  tag_ids: number[];
}

/**
 * The columns both statements answer with, read from the visibility, feature and voter-count
 * steps. The visibility step locked the feature row, so its board, column and status are the
 * committed ones; the tags come from fb_feature_tag_ids (migration 2026-11-27T23-00-00), which
 * reads them with a fresh snapshot, after the lock.
 */
const outcomeColumns = [
  "visible.is_votable",
  "feature.vote_count",
  "feature.weighted_score",
  "feature.trending_score",
  sql<boolean>`EXISTS (SELECT 1 FROM project)`.as("voter_count_moved"),
  "visible.board_id",
  "visible.column_id",
  "visible.status",
  sql<number[]>`fb_feature_tag_ids(${sql.ref("visible.id")})`.as("tag_ids"),
] as const;

/** The vote.created / vote.deleted row of the outbox, built from the feature and voter steps. */
function voteEventRow(type: "vote.created" | "vote.deleted", target: { projectId: unknown; featureId: unknown }) {
  return [
    sql<number>`${target.projectId}::int`,
    sql<string>`${sql.lit(type)}`,
    // data: {object: {feature_id, voter_id, vote_count}, changes: null}; voter_id is the public id.
    sql<string>`jsonb_build_object('object', jsonb_build_object('feature_id', ${target.featureId}::int,
      'voter_id', ${sql.ref("voter.public_id")}, 'vote_count', ${sql.ref("feature.vote_count")}), 'changes', null)`,
  ] as const;
}

const castStatement = new QueryTemplate<ProjectSettings, VoteValues & { now: Date; scoreIsWeighted: boolean }, OutcomeRow>(
  visibilityShapeKey,
  (db, settings, param) => {
    const target = { projectId: param("projectId"), featureId: param("featureId"), voterId: param("voterId") };
    const feature = adminFeatureJsonSql(db, { id: target.projectId, settings }, target.featureId, param("now"), {
      vote_count: sql.ref("feature.vote_count"),
      weighted_score: sql.ref("feature.weighted_score"),
      score_is_weighted: param("scoreIsWeighted"),
    });
    const [projectId, voteType, voteData] = voteEventRow("vote.created", target);
    return (
      db
        .with("visible", (q) =>
          lockedVisibleFeature(q, settings, { ...target, allowVoting: param("allowVoting") }).select("features.vote_milestone"),
        )
        .with("vote", (q) =>
          q
            .insertInto("votes")
            .columns(["feature_id", "voter_id", "project_id", "weight", "created_at"])
            .expression((eb) =>
              eb
                .selectFrom(["visible", "voters"])
                .leftJoin("tiers", "tiers.id", "voters.tier_id")
                .where("voters.id", "=", target.voterId)
                .where("voters.project_id", "=", target.projectId)
                .where("visible.is_votable", "=", true)
                .select([
                  "visible.id",
                  "voters.id as voter_id",
                  "voters.project_id",
                  // weight = the voter's tier multiplier, 1 without a tier
                  sql<number>`coalesce(${sql.ref("tiers.multiplier")}, 1)`.as("weight"),
                  sql<Date>`${param("now")}::timestamptz`.as("created_at"),
                ]),
            )
            .onConflict((oc) => oc.columns(["feature_id", "voter_id"]).doNothing())
            // The exponent is taken from the stored timestamp so a withdrawal removes exactly it.
            .returning(["votes.weight", voteExponent(sql.ref("votes.created_at")).as("x")]),
        )
        // Engagement rule 1: the vote subscribes its voter (not when they hold a row already).
        .with("subscription", (q) => voteSubscriptionInsert(q, "vote", { ...target, now: param("now") }))
        .with("feature", (q) => moveFeatureCounters(q, target, 1, addVoteToTrending(sql<number>`${sql.ref("vote.x")}`)))
        .with("voter", (q) => moveVoterCount(q, target, 1))
        .with("project", (q) => moveVoterCountOfProject(q, target, 1))
        // One INSERT, so the vote's event precedes the milestone's in the feed (rows in UNION ALL order).
        .with("event", (q) =>
          (q as unknown as QueryWithVoter)
            .insertInto("events")
            .columns(["project_id", "type", "data"])
            .expression(
              sql`SELECT ${projectId}, ${voteType}, ${voteData} FROM feature, voter
            UNION ALL
            SELECT ${target.projectId}::int, 'feature.vote_milestone',
              jsonb_build_object('object', ${feature}, 'changes', jsonb_build_object('vote_count',
                jsonb_build_object('from', feature.vote_milestone - 1, 'to', feature.vote_milestone)))
            FROM feature, voter, visible WHERE feature.vote_milestone > visible.vote_milestone`,
            ),
        )
        .selectFrom("visible")
        .leftJoin("feature", (join) => join.onTrue())
        .select(outcomeColumns)
    );
  },
);

const withdrawStatement = new QueryTemplate<ProjectSettings, VoteValues, OutcomeRow>(visibilityShapeKey, (db, settings, param) => {
  const target = { projectId: param("projectId"), featureId: param("featureId"), voterId: param("voterId") };
  return db
    .with("visible", (q) => lockedVisibleFeature(q, settings, { ...target, allowVoting: param("allowVoting") }))
    .with("vote", (q) =>
      q
        .deleteFrom("votes")
        .using("visible")
        .whereRef("votes.feature_id", "=", "visible.id")
        .where("votes.voter_id", "=", target.voterId)
        .returning(["votes.weight", voteExponent(sql.ref("votes.created_at")).as("x")]),
    )
    .with("feature", (q) =>
      moveFeatureCounters(
        q,
        target,
        -1,
        // SET sees the row before the update, so the votes left are vote_count - 1.
        removeVoteFromTrending(
          sql<number>`${sql.ref("vote.x")}`,
          sql<number>`features.vote_count - 1`,
          recomputedTrending(target.featureId, target.voterId),
        ),
      ),
    )
    .with("voter", (q) => moveVoterCount(q, target, -1))
    .with("project", (q) => moveVoterCountOfProject(q, target, -1))
    .with("event", (q) =>
      (q as unknown as QueryWithVoter)
        .insertInto("events")
        .columns(["project_id", "type", "data"])
        .expression(sql`SELECT ${sql.join(voteEventRow("vote.deleted", target))} FROM feature, voter`),
    )
    .selectFrom("visible")
    .leftJoin("feature", (join) => join.onTrue())
    .select(outcomeColumns);
});

/**
 * The visibility step of both statements, locking the feature row (FOR NO KEY UPDATE) before
 * the vote row is touched. Every writer that changes a feature's votes then takes the feature
 * row first: an owner's merge, unmerge or deletion holding it makes the vote wait before it
 * inserts anything (no vote row waiting on the merge while the merge waits on it: no deadlock),
 * and once it proceeds the feature is re-read as committed (a merged duplicate is archived, a
 * deleted feature is gone: hidden). The lock is the one the counter update takes anyway.
 */
function lockedVisibleFeature(
  q: Parameters<typeof visibleFeatureQuery>[0],
  settings: ProjectSettings,
  check: Parameters<typeof visibleFeatureQuery>[2],
) {
  // The project's write lock (shared) first: a filter of the feature's scan, below the row lock.
  return visibleFeatureQuery(q, settings, check).where(sharedProjectWriteLock(check.projectId)).forNoKeyUpdate("features");
}

/**
 * Runs a vote statement; when it finds no visible feature, runs it once more. A statement that
 * waited on the project's write lock for a replace read the rows as they were before it, so the
 * feature it locked was gone (the replace re-inserted it): the second run reads the restored
 * project, and the vote waits for the replace and succeeds instead of answering 404. Only the
 * 404 path pays for it. Deadlock victims are retried; a vanished row answers 404.
 */
async function onceMoreWhenHidden(run: () => Promise<OutcomeRow | undefined>): Promise<OutcomeRow | undefined> {
  const attempt = () => answeringVanishedRows(() => retryingConflicts(run));
  return (await attempt()) ?? (await attempt());
}

function outcomeOf(row: OutcomeRow | undefined, requireVotable: boolean): VoteOutcome {
  if (!row) return { kind: "hidden" };
  if (requireVotable && !row.is_votable) return { kind: "not_votable" };
  if (row.vote_count === null || row.weighted_score === null) return { kind: "unchanged" };
  return {
    kind: "changed",
    counters: { vote_count: row.vote_count, weighted_score: row.weighted_score },
    moves: {
      trending_score: row.trending_score === null ? null : Number(row.trending_score),
      voter_count_moved: Boolean(row.voter_count_moved),
      board_id: row.board_id,
      column_id: row.column_id,
      status: row.status,
      tag_ids: row.tag_ids.map(Number),
    },
  };
}

/**
 * Records the voter's vote on a feature they can see that takes votes, with weight = the
 * voter's tier multiplier (1 without a tier), cast at `now`, its vote.created event and, when it
 * brings vote_count to a milestone not yet announced, feature.vote_milestone: one statement.
 */
export async function castVote(db: Db, settings: ProjectSettings, target: VoteTarget, now: Date): Promise<VoteOutcome> {
  const row = await waitingOutReplace(db, target.projectId, () =>
    onceMoreWhenHidden(() =>
      castStatement.executeTakeFirst(db, settings, {
        ...target,
        allowVoting: settings.allow_voting,
        now,
        scoreIsWeighted: settings.score_is_weighted,
      }),
    ),
  );
  return outcomeOf(row, true);
}

/**
 * Removes the voter's vote from a feature they can see (also where no new vote would be
 * accepted) and takes back exactly what it added.
 */
export async function withdrawVote(db: Db, settings: ProjectSettings, target: VoteTarget): Promise<VoteOutcome> {
  const row = await waitingOutReplace(db, target.projectId, () =>
    onceMoreWhenHidden(() => withdrawStatement.executeTakeFirst(db, settings, { ...target, allowVoting: settings.allow_voting })),
  );
  return outcomeOf(row, false);
}

// One statement instead of six round trips (visibility check, BEGIN, three or four statements,
// COMMIT) also shortens how long the feature row stays locked. Each step reads the one before
// it (visible -> vote -> feature -> voter -> voter-count shard), so a step runs only when the
// vote row really changed, and rows are locked in the order feature, voter, voter-count shard.
type FeatureStep = { vote_count: number; weighted_score: number; trending_score: number | null; vote_milestone: number };
type VoteStep = { weight: number; x: number };

/**
 * Moves the feature's vote_count and weighted_score by the vote row just inserted (`delta` 1) or
 * deleted (-1), and sets its trending_score to `trending`.
 */
function moveFeatureCounters<Q extends { updateTable: Db["updateTable"] }>(
  q: Q,
  target: VoteTarget,
  delta: 1 | -1,
  trending: RawBuilder<number | null>,
) {
  const by = delta === 1 ? "+" : "-";
  const reached = sql<number>`features.vote_count + 1`;
  return (q as unknown as QueryWithVote)
    .updateTable("features")
    .from("vote")
    .set((eb) => ({
      vote_count: eb("features.vote_count", by, 1),
      weighted_score: eb("features.weighted_score", by, eb.ref("vote.weight")),
      trending_score: trending,
      // A cast reaching a threshold above the one announced raises it; the cast statement
      // records feature.vote_milestone from the difference.
      ...(delta === 1
        ? {
            vote_milestone: sql<number>`CASE WHEN ${isVoteMilestoneSql(reached)} AND ${reached} > features.vote_milestone
              THEN ${reached} ELSE features.vote_milestone END`,
          }
        : {}),
    }))
    .where("features.id", "=", target.featureId)
    .returning(["features.vote_count", "features.weighted_score", "features.trending_score", "features.vote_milestone"]);
}

/** Moves the voter's vote_count by `delta` once the feature row has been updated. */
function moveVoterCount<Q extends { updateTable: Db["updateTable"] }>(q: Q, target: VoteTarget, delta: 1 | -1) {
  return (q as unknown as QueryWithFeature)
    .updateTable("voters")
    .from("feature")
    .set((eb) => ({ vote_count: eb("voters.vote_count", "+", delta) }))
    .where("voters.id", "=", target.voterId)
    .returning(["voters.vote_count", "voters.public_id"]);
}

/**
 * Moves the project's voter count by `delta` when the voter just gained a first vote or lost the
 * last: in the voter's shard row of project_voter_counts (voter_id % VOTER_COUNT_SHARDS), so that
 * concurrent first votes of one project do not all queue on one row until they commit. A first
 * vote creates its shard row; a last withdrawal finds the row its vote (or the import) counted in.
 */
function moveVoterCountOfProject<Q extends { updateTable: Db["updateTable"]; insertInto: Db["insertInto"] }>(
  q: Q,
  target: VoteTarget,
  delta: 1 | -1,
) {
  const voterQuery = q as unknown as QueryWithVoter;
  const shard = sql<number>`${target.voterId} % ${sql.lit(VOTER_COUNT_SHARDS)}`;
  if (delta === 1) {
    return voterQuery
      .insertInto("project_voter_counts")
      .columns(["project_id", "shard", "voter_count"])
      .expression((eb) =>
        eb
          .selectFrom("voter")
          .where("voter.vote_count", "=", 1)
          .select([sql<number>`${target.projectId}::int`.as("project_id"), shard.as("shard"), eb.lit(1).as("voter_count")]),
      )
      .onConflict((oc) =>
        oc.columns(["project_id", "shard"]).doUpdateSet((eb) => ({ voter_count: eb("project_voter_counts.voter_count", "+", 1) })),
      )
      .returning("project_voter_counts.shard");
  }
  return voterQuery
    .updateTable("project_voter_counts")
    .from("voter")
    .set((eb) => ({ voter_count: eb("project_voter_counts.voter_count", "-", 1) }))
    .where("project_voter_counts.project_id", "=", target.projectId)
    .where("project_voter_counts.shard", "=", shard)
    .where("voter.vote_count", "=", 0)
    .returning("project_voter_counts.shard");
}

type QueryWithVote = Kysely<Database & { vote: VoteStep }>;
type QueryWithFeature = Kysely<Database & { feature: FeatureStep }>;
type QueryWithVoter = Kysely<Database & { feature: FeatureStep; voter: { vote_count: number; public_id: string } }>;
