/**
 * The subscriptions a change makes by itself (engagement-api-v3.md, "Subscriptions" rules 1
 * and 3), written inside the transaction (or the single statement) of the change that makes
 * them: a suggestion, a vote, a comment, an owner's new feature with an author, a merge.
 *
 * Every write here is an INSERT ... ON CONFLICT (feature_id, voter_id) DO NOTHING on the
 * subscriptions primary key, so:
 * - an existing subscription keeps its reason and time (rule 1);
 * - an opt-out (a row with opted_out true, left by DELETE .../subscription) is never turned
 *   back into a subscription by these (rule 2: only a PUT clears it);
 * - concurrent changes by the same voter on the same feature leave exactly one row.
 *
 * These live below the areas (not in src/routes/subscriptions/) because the features area writes
 * them (suggestions, owner features, merges) while the subscriptions area reads the features
 * area's visibility rule: one of the two had to sit underneath.
 */
import { type QueryCreator, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { Database, SubscriptionReason } from "../../../db/schema.ts";

/** Who subscribes to what, and why; ids are internal row ids, `now` the change's time. */
export interface AutoSubscription {
  projectId: number;
  featureId: number;
  voterId: number;
  reason: Exclude<SubscriptionReason, "manual" | "merge">;
  now: Date;
}

/**
 * Subscribes the voter to the feature with `reason` unless they already have a row for it
 * (subscribed, whatever the reason, or opted out). Run it in the change's transaction `trx`.
 * Rule 1 ("Suggesting a feature subscribes its author ... posting a comment or reply subscribes
 * its author ... an owner's new feature with author_voter_id subscribes that voter").
 */
export async function subscribeOnChange(trx: Db, subscription: AutoSubscription): Promise<void> {
  await trx
    .insertInto("subscriptions")
    .values({
      feature_id: subscription.featureId,
      voter_id: subscription.voterId,
      project_id: subscription.projectId,
      reason: subscription.reason,
      opted_out: false,
      created_at: subscription.now,
    })
    .onConflict((oc) => oc.columns(["feature_id", "voter_id"]).doNothing())
    .execute();
}

/**
 * The data-modifying CTE body that subscribes a voter with reason `vote` for each row of the
 * CTE named `step` (the vote statement's inserted vote row: none when the vote already existed),
 * so the subscription commits or rolls back with the vote, in the vote's own statement (no extra
 * round trip). Values may be query-template parameters. Rule 1 ("casting a vote subscribes the
 * voter").
 */
export function voteSubscriptionInsert<Q extends Pick<QueryCreator<Database>, "insertInto">>(
  q: Q,
  step: string,
  values: { projectId: unknown; featureId: unknown; voterId: unknown; now: unknown },
) {
  return q
    .insertInto("subscriptions")
    .columns(["feature_id", "voter_id", "project_id", "reason", "opted_out", "created_at"])
    .expression(
      sql`SELECT ${values.featureId}::int, ${values.voterId}::int, ${values.projectId}::int, 'vote', false, ${values.now}::timestamptz
        FROM ${sql.table(step)}`,
    )
    .onConflict((oc) => oc.columns(["feature_id", "voter_id"]).doNothing());
}

/**
 * Rule 3: subscribes every subscriber of the duplicate `sourceId` who has not opted out of it to
 * the target `targetId` with reason `merge`, except voters who already have a row on the target
 * (subscribed or opted out): one INSERT ... SELECT in the merge's transaction `trx`. Returns how
 * many voters it subscribed.
 */
export async function copySubscriptionsOnMerge(
  trx: Db,
  merge: { projectId: number; sourceId: number; targetId: number; now: Date },
): Promise<number> {
  const result = await sql`INSERT INTO subscriptions (feature_id, voter_id, project_id, reason, opted_out, created_at)
    SELECT ${merge.targetId}::int, s.voter_id, ${merge.projectId}::int, 'merge', false, ${merge.now}::timestamptz
    FROM subscriptions s WHERE s.feature_id = ${merge.sourceId}::int AND NOT s.opted_out
    ORDER BY s.voter_id
    ON CONFLICT (feature_id, voter_id) DO NOTHING`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}
