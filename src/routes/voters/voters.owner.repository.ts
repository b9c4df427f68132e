/**
 * The owner's voter queries and writes (owner-api-v3.md, GET/PATCH/DELETE /voters, Rules 3 and
 * 6). Reads extend the revenue area's voter query (selectVotersWithTier); writes take a `db | trx`
 * and run inside the caller's one transaction. Revenue aggregates (feature_tier_votes) follow
 * tier, override and churn changes by trigger (migration 2026-11-22T22-00-00); the public score
 * is not touched: a vote keeps the weight it was cast with.
 */
import { type ExpressionBuilder, sql, type Updateable } from "kysely";
import type { Db } from "../../../db/connect.ts";
import { type Database, VOTER_COUNT_SHARDS, type VotersTable } from "../../../db/schema.ts";
import { scrubVoterEvents, scrubVoterNotifications } from "../../events/erasure.ts";
import { type PageRequest, pageOffset } from "../../lib/http/pagination.ts";
import { trendingFromVotes } from "../../lib/rules/trending.ts";
import { countVoters, selectVotersWithTier } from "../revenue/index.ts";
import type { VoterPatchBody } from "./voters.owner.schemas.ts";

export interface AdminVoterFilters {
  /** Case-insensitive substring of display name, email, company or either customer id. */
  q?: string | undefined;
  banned?: boolean | undefined;
  tierId?: number | undefined;
  churned?: boolean | undefined;
}

/** The revenue columns plus what AdminVoterObject adds. */
function selectAdminVoters(db: Db) {
  return selectVotersWithTier(db).select([
    "voters.kind",
    "voters.email",
    "voters.sso_id",
    "voters.role",
    "voters.banned",
    "voters.email_unsubscribed",
    "voters.created_at",
  ]);
}

export type AdminVoterRow = Awaited<ReturnType<ReturnType<typeof selectAdminVoters>["executeTakeFirstOrThrow"]>>;

/** `value` as a LIKE pattern matching itself anywhere (\, % and _ taken literally). */
function containsPattern(value: string): string {
  return `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function matching(projectId: number, filters: AdminVoterFilters) {
  return (eb: ExpressionBuilder<Database, "voters">) => {
    const conditions = [eb("voters.project_id", "=", projectId)];
    const q = filters.q?.trim();
    if (q) {
      const pattern = containsPattern(q);
      conditions.push(
        eb.or(
          (["display_name", "email", "company", "stripe_customer_id", "paddle_customer_id"] as const).map((column) =>
            eb(`voters.${column}`, "ilike", pattern),
          ),
        ),
      );
    }
    if (filters.banned !== undefined) conditions.push(eb("voters.banned", "=", filters.banned));
    if (filters.tierId !== undefined) conditions.push(eb("voters.tier_id", "=", filters.tierId));
    if (filters.churned !== undefined) conditions.push(eb("voters.churned", "=", filters.churned));
    return eb.and(conditions);
  };
}

/** One page of the project's voters matching `filters` in creation order, and the total. */
export async function listAdminVoters(db: Db, projectId: number, filters: AdminVoterFilters, request: PageRequest) {
  const rows = await selectAdminVoters(db)
    .where(matching(projectId, filters))
    .orderBy("voters.id", "asc")
    .limit(request.per_page)
    .offset(pageOffset(request))
    .execute();
  return { rows, total: await countVoters(db, matching(projectId, filters)) };
}

/** The voter `publicId` of the project, or undefined. */
export async function findAdminVoter(db: Db, projectId: number, publicId: string): Promise<AdminVoterRow | undefined> {
  return selectAdminVoters(db).where("voters.project_id", "=", projectId).where("voters.public_id", "=", publicId).executeTakeFirst();
}

/**
 * The voter `publicId` of the project row-locked (FOR UPDATE, the lock updateVoter and
 * eraseVoter take) and read as AdminVoterRow: the state a change is about to replace, for its
 * events. Undefined when the project has no such voter.
 */
export async function lockAdminVoter(trx: Db, projectId: number, publicId: string): Promise<AdminVoterRow | undefined> {
  if (!(await lockVoter(trx, projectId, publicId))) return undefined;
  return findAdminVoter(trx, projectId, publicId);
}

/** The voter's internal id, row-locked (FOR UPDATE) for the rest of `trx`; undefined if none. */
async function lockVoter(trx: Db, projectId: number, publicId: string) {
  return trx
    .selectFrom("voters")
    .select(["id", "churned", "anon_token_hash"])
    .where("project_id", "=", projectId)
    .where("public_id", "=", publicId)
    .forUpdate()
    .executeTakeFirst();
}

export type UpdateVoterResult = { kind: "updated"; row: AdminVoterRow } | { kind: "not_found" } | { kind: "bad_tier" };

/**
 * Applies `patch` (Rule 6) to voter `publicId` inside `trx`: absent keys unchanged, null clears.
 * `churned: true` on a voter not churned records churned_at `now` and churn_source "manual";
 * `false` clears churned, churned_at and churn_source. `bad_tier` when tier_id names no tier of
 * the project (nothing changed).
 */
export async function updateVoter(
  trx: Db,
  projectId: number,
  publicId: string,
  patch: VoterPatchBody,
  now: Date,
): Promise<UpdateVoterResult> {
  const voter = await lockVoter(trx, projectId, publicId);
  if (!voter) return { kind: "not_found" };
  if (patch.tier_id !== undefined && patch.tier_id !== null) {
    const tier = await trx
      .selectFrom("tiers")
      .select("id")
      .where("id", "=", patch.tier_id)
      .where("project_id", "=", projectId)
      .executeTakeFirst();
    if (!tier) return { kind: "bad_tier" };
  }
  const { churned, ...fields } = patch;
  const churn =
    churned === true
      ? voter.churned
        ? {}
        : { churned: true, churned_at: now, churn_source: "manual" }
      : churned === false
        ? { churned: false, churned_at: null, churn_source: null }
        : {};
  await writeVoterFields(trx, voter.id, { ...fields, ...churn }, now);
  const row = await findAdminVoter(trx, projectId, publicId);
  return { kind: "updated", row: row! };
}

/**
 * Writes `fields` to voter row `voterId` inside `trx`, stamping updated_at `now`: the one write
 * of a voter's tier, override, churn and billing fields, shared by the owner's PATCH and the
 * billing sync (src/routes/billing/). The revenue aggregates (feature_tier_votes) follow
 * tier_id, mrr_override_cents and churned by trigger in this same statement, so the revenue
 * routes are exact when the transaction commits; the public score is left alone (a vote keeps the
 * weight it was cast with, Rule 6). The caller holds the voter's row lock.
 */
export async function writeVoterFields(trx: Db, voterId: number, fields: Updateable<VotersTable>, now: Date): Promise<void> {
  await trx
    .updateTable("voters")
    .set({ ...fields, updated_at: now })
    .where("id", "=", voterId)
    .execute();
}

/**
 * Erases voter `publicId` (Rule 3) inside `trx`: its votes (each feature's vote_count,
 * weighted_score and trending_score moved by exactly that vote, the project's voter count by
 * the voter), its likes (like_count), its comments with every reply to them (comment_count), its
 * dismissals, the personal fields of every stored event about it and the quotes of its comments
 * in other voters' notifications (src/events/erasure.ts), then the voter (its own subscriptions,
 * notifications and emails go with it, by foreign key). The voter row is locked first, so the
 * voter's own writes racing the erasure wait and then find no voter. Returns the erased voter's
 * anon_token_hash (null for an SSO voter), whose idempotency records the caller deletes too, or
 * null when the project has no such voter.
 */
export async function eraseVoter(trx: Db, projectId: number, publicId: string): Promise<{ anonTokenHash: string | null } | null> {
  const voter = await lockVoter(trx, projectId, publicId);
  if (!voter) return null;
  const voterId = voter.id;

  // Deleted by a direct statement (not the cascade) so the revenue aggregates' trigger still
  // sees the voter's tier; the feature counters then drop by exactly these rows.
  const votes = await trx.deleteFrom("votes").where("voter_id", "=", voterId).returning(["feature_id", "weight"]).execute();
  if (votes.length > 0) {
    const featureIds = votes.map((vote) => vote.feature_id);
    const weights = votes.map((vote) => vote.weight);
    await sql`UPDATE features AS f
      SET vote_count = f.vote_count - 1, weighted_score = f.weighted_score - d.weight,
          trending_score = ${trendingFromVotes(sql.ref("f.id"))}
      FROM unnest(${featureIds}::int[], ${weights}::int[]) AS d(feature_id, weight)
      WHERE f.id = d.feature_id`.execute(trx);
    await trx
      .updateTable("project_voter_counts")
      .set((eb) => ({ voter_count: eb("voter_count", "-", 1) }))
      .where("project_id", "=", projectId)
      .where("shard", "=", voterId % VOTER_COUNT_SHARDS)
      .execute();
  }

  const likes = await trx.deleteFrom("comment_likes").where("voter_id", "=", voterId).returning("comment_id").execute();
  if (likes.length > 0) {
    await trx
      .updateTable("comments")
      .set((eb) => ({ like_count: eb("like_count", "-", 1) }))
      .where(
        "id",
        "in",
        likes.map((like) => like.comment_id),
      )
      .execute();
  }

  // The voter's comments are locked before the delete so that a reply being written to one of
  // them (createComment key-share locks its parent) either lands first and is deleted here, or
  // waits and then finds no parent.
  const own = await trx.selectFrom("comments").select(["id", "parent_id"]).where("voter_id", "=", voterId).forUpdate().execute();
  if (own.length > 0) {
    const topLevel = own.filter((comment) => comment.parent_id === null).map((comment) => comment.id);
    const removed = await trx
      .deleteFrom("comments")
      .where((eb) => eb.or([eb("voter_id", "=", voterId), ...(topLevel.length > 0 ? [eb("parent_id", "in", topLevel)] : [])]))
      .returning("feature_id")
      .execute();
    const perFeature = new Map<number, number>();
    for (const { feature_id } of removed) perFeature.set(feature_id, (perFeature.get(feature_id) ?? 0) + 1);
    await sql`UPDATE features AS f SET comment_count = f.comment_count - d.n
      FROM unnest(${[...perFeature.keys()]}::int[], ${[...perFeature.values()]}::int[]) AS d(feature_id, n)
      WHERE f.id = d.feature_id`.execute(trx);
  }

  await trx.deleteFrom("message_dismissals").where("voter_id", "=", voterId).execute();
  // Last, once the voter's row and comments are locked: no event or notification naming the
  // voter can commit after these statements' snapshots (see scrubVoterEvents, scrubVoterNotifications).
  await scrubVoterEvents(trx, projectId, voterId);
  await scrubVoterNotifications(trx, projectId, voterId);
  await trx.deleteFrom("voters").where("id", "=", voterId).execute();
  return { anonTokenHash: voter.anon_token_hash };
}
