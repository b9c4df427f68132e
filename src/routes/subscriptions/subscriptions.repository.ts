/**
 * A voter's subscriptions (engagement-api-v3.md, "Subscriptions"): the list, PUT and DELETE.
 * The subscriptions changes make by themselves (votes, comments, suggestions, merges) are in
 * src/lib/data/subscriptions.ts.
 *
 * One row per voter and feature: `opted_out` false is a subscription, true an opt-out (rule 2).
 * PUT and DELETE run in one transaction holding the project's write lock (shared), key-share lock
 * the feature row while they check its visibility (a feature being deleted makes them wait, then
 * answer 404; votes and comments, which hold it FOR NO KEY UPDATE, do not conflict with it), and
 * change the row by one upsert on the primary key, so parallel PUTs and DELETEs of one voter
 * serialise on that row and the last to commit decides its state.
 */
import type { ExpressionBuilder } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { Database, ProjectSettings, SubscriptionReason } from "../../../db/schema.ts";
import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import { type PageRequest, pageOffset } from "../../lib/http/pagination.ts";
import { visibleFeatureQuery, visibleTo } from "../features/index.ts";

type Project = { id: number; settings: ProjectSettings };

/** A subscription as the routes show it: the feature's id and heading, reason and start. */
export interface SubscriptionRow {
  feature_id: number;
  heading: string;
  reason: SubscriptionReason;
  created_at: Date;
}

/**
 * One page of the voter's subscriptions (opt-outs excluded) on features they can see (the public
 * rule, plus their own suggestions), newest first (feature id breaks ties), and the total.
 */
export async function listVoterSubscriptions(
  db: Db,
  project: Project,
  voterId: number,
  paging: PageRequest,
): Promise<{ rows: SubscriptionRow[]; total: number }> {
  const visible = visibleTo(project.settings, voterId);
  const base = db
    .selectFrom("subscriptions")
    .innerJoin("features", "features.id", "subscriptions.feature_id")
    .where("subscriptions.voter_id", "=", voterId)
    .where("subscriptions.opted_out", "=", false)
    .where("features.project_id", "=", project.id)
    .where((eb) => visible(eb as unknown as ExpressionBuilder<Database, "features">));
  const [rows, counted] = await Promise.all([
    base
      .select(["subscriptions.feature_id", "features.heading", "subscriptions.reason", "subscriptions.created_at"])
      .orderBy("subscriptions.created_at", "desc")
      .orderBy("subscriptions.feature_id", "desc")
      .limit(paging.per_page)
      .offset(pageOffset(paging))
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(counted.total) };
}

/** The feature if the voter may see it, key-share locked for the rest of the transaction. */
async function lockVisibleFeature(trx: Db, project: Project, featureId: number, voterId: number) {
  return visibleFeatureQuery(trx, project.settings, {
    projectId: project.id,
    featureId,
    voterId,
    allowVoting: project.settings.allow_voting,
  })
    .select("features.heading")
    .forKeyShare("features")
    .executeTakeFirst();
}

/**
 * PUT: subscribes the voter to the feature. A voter without a subscription (no row, or an
 * opt-out) gets one with reason `manual` starting `now` (the opt-out is cleared); an existing
 * subscription is returned unchanged. undefined when the feature does not exist in the project
 * or the voter cannot see it (404).
 */
export async function subscribe(
  db: Db,
  project: Project,
  featureId: number,
  voterId: number,
  now: Date,
): Promise<SubscriptionRow | undefined> {
  return withProjectWriteLock(db, project.id, async (trx) => {
    const feature = await lockVisibleFeature(trx, project, featureId, voterId);
    if (!feature) return undefined;
    const row = await trx
      .insertInto("subscriptions")
      .values({ feature_id: featureId, voter_id: voterId, project_id: project.id, reason: "manual", opted_out: false, created_at: now })
      .onConflict((oc) =>
        oc.columns(["feature_id", "voter_id"]).doUpdateSet((eb) => ({
          // SET reads the row as it was: an opt-out becomes a new manual subscription, a
          // subscription stays as it is.
          reason: eb
            .case()
            .when("subscriptions.opted_out", "=", true)
            .then(eb.ref("excluded.reason"))
            .else(eb.ref("subscriptions.reason"))
            .end(),
          created_at: eb
            .case()
            .when("subscriptions.opted_out", "=", true)
            .then(eb.ref("excluded.created_at"))
            .else(eb.ref("subscriptions.created_at"))
            .end(),
          opted_out: false,
        })),
      )
      .returning(["reason", "created_at"])
      .executeTakeFirstOrThrow();
    return { feature_id: featureId, heading: feature.heading, reason: row.reason, created_at: row.created_at };
  });
}

/**
 * DELETE: records the voter's opt-out of the feature (rule 2), whether or not they were
 * subscribed; a row made for an opt-out alone has reason `manual` and starts `now`, an existing
 * row keeps its reason and time. false when the feature does not exist in the project or the
 * voter cannot see it (404).
 */
export async function unsubscribe(db: Db, project: Project, featureId: number, voterId: number, now: Date): Promise<boolean> {
  return withProjectWriteLock(db, project.id, async (trx) => {
    if (!(await lockVisibleFeature(trx, project, featureId, voterId))) return false;
    await trx
      .insertInto("subscriptions")
      .values({ feature_id: featureId, voter_id: voterId, project_id: project.id, reason: "manual", opted_out: true, created_at: now })
      .onConflict((oc) => oc.columns(["feature_id", "voter_id"]).doUpdateSet({ opted_out: true }))
      .execute();
    return true;
  });
}
