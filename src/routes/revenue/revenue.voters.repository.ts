/**
 * Queries behind GET /projects/{slug}/voters (contract, "Revenue"): one page of voters with
 * their tier, the matching total, and the newest votes of the whole page in one query.
 */
import { type Expression, type ExpressionBuilder, type SqlBool, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { Database } from "../../../db/schema.ts";
import { type PageRequest, pageOffset } from "../../lib/http/pagination.ts";

/** Most votes listed per voter (contract, "Limits"). */
export const VOTES_PER_VOTER = 100;

export interface VoterFilters {
  /** Matched against stripe_customer_id OR paddle_customer_id. */
  customerId?: string | undefined;
  churned?: boolean | undefined;
  /** Only voters with a vote on this feature. */
  featureId?: number | undefined;
}

type VoterScope = ExpressionBuilder<Database, "voters">;

function matching(projectId: number, filters: VoterFilters) {
  return (eb: VoterScope) => {
    const conditions = [eb("voters.project_id", "=", projectId)];
    const { customerId, churned, featureId } = filters;
    if (customerId !== undefined) {
      conditions.push(eb.or([eb("voters.stripe_customer_id", "=", customerId), eb("voters.paddle_customer_id", "=", customerId)]));
    }
    if (churned !== undefined) conditions.push(eb("voters.churned", "=", churned));
    if (featureId !== undefined) {
      // Served by the votes primary key (feature_id, voter_id).
      conditions.push(
        eb.exists(
          eb
            .selectFrom("votes")
            .select(sql<number>`1`.as("one"))
            .whereRef("votes.voter_id", "=", "voters.id")
            .where("votes.feature_id", "=", featureId),
        ),
      );
    }
    return eb.and(conditions);
  };
}

/**
 * Voters with the columns RevenueVoterObject is mapped from (toRevenueVoter) and their tier's
 * columns (null without a tier). Shared with the owner's voter routes (AdminVoterObject extends
 * RevenueVoterObject), which add their own columns and filters.
 */
export function selectVotersWithTier(db: Db) {
  return db
    .selectFrom("voters")
    .leftJoin("tiers", "tiers.id", "voters.tier_id")
    .select([
      "voters.id",
      "voters.public_id",
      "voters.display_name",
      "voters.company",
      "voters.stripe_customer_id",
      "voters.paddle_customer_id",
      "voters.subscription_id",
      "voters.subscription_status",
      "voters.subscribed_at",
      "voters.trial_ends_at",
      "voters.canceled_at",
      "voters.churned",
      "voters.churned_at",
      "voters.churn_source",
      "voters.last_synced_at",
      "voters.mrr_override_cents",
      "voters.vote_count",
      "tiers.id as tier_id",
      "tiers.name as tier_name",
      "tiers.mrr_cents as tier_mrr_cents",
      "tiers.multiplier as tier_multiplier",
    ]);
}

/**
 * One page of the project's voters matching `filters`, ordered by internal id (creation
 * order), each with its tier columns (null without a tier), plus the total across pages.
 * Amounts are integer cents.
 */
export async function listRevenueVoters(db: Db, projectId: number, filters: VoterFilters, request: PageRequest) {
  const rows = await selectVotersWithTier(db)
    .where(matching(projectId, filters))
    .orderBy("voters.id", "asc")
    .limit(request.per_page)
    .offset(pageOffset(request))
    .execute();
  return { rows, total: await countVoters(db, matching(projectId, filters)) };
}

/** How many voters `condition` selects (the total of a paged voter list). */
export async function countVoters(db: Db, condition: (eb: VoterScope) => Expression<SqlBool>): Promise<number> {
  const { total } = await db.selectFrom("voters").select(sql<number>`count(*)::int`.as("total")).where(condition).executeTakeFirstOrThrow();
  return total;
}

export type RevenueVoterRow = Awaited<ReturnType<typeof listRevenueVoters>>["rows"][number];

export interface VoteRefRow {
  voter_id: number;
  feature_id: number;
  heading: string;
  voted_at: Date;
}

/**
 * The newest `VOTES_PER_VOTER` votes of each of `voterIds` (internal ids), in one query:
 * row_number() per voter over (created_at desc, feature_id desc) keeps the cut stable when two
 * votes share a timestamp. Rows come grouped by voter, newest first within a voter.
 */
export async function listNewestVotes(db: Db, voterIds: number[]): Promise<VoteRefRow[]> {
  if (voterIds.length === 0) return [];
  return db
    .selectFrom((eb) =>
      eb
        .selectFrom("votes")
        .innerJoin("features", "features.id", "votes.feature_id")
        .select([
          "votes.voter_id",
          "votes.feature_id",
          "features.heading",
          "votes.created_at as voted_at",
          sql<number>`(row_number() OVER (PARTITION BY votes.voter_id ORDER BY votes.created_at DESC, votes.feature_id DESC))::int`.as(
            "rank",
          ),
        ])
        .where("votes.voter_id", "in", voterIds)
        .as("ranked"),
    )
    .select(["ranked.voter_id", "ranked.feature_id", "ranked.heading", "ranked.voted_at"])
    .where("ranked.rank", "<=", VOTES_PER_VOTER)
    .orderBy("ranked.voter_id")
    .orderBy("ranked.rank")
    .execute();
}
