/**
 * Stored counters after an import (imports-v3.md, "Mapping", Votes: "every stored counter
 * exact, as if the votes had been cast"): features.vote_count, weighted_score, trending_score and
 * comment_count of the features the import touched, their vote_milestone raised to the milestone
 * their count has passed (no feature.vote_milestone event: an import records none), and
 * voters.vote_count with the project's voter count shards for the voters who gained votes.
 *
 * Why this stays exact while live votes and comments commit during the import: every feature
 * the import writes votes or comments to was either created by it (invisible to others until
 * commit) or locked FOR NO KEY UPDATE, in id order, at the start of the import (lockFeatures),
 * the lock a vote statement takes on the feature row before it inserts its vote. So no live vote
 * on those features commits between that lock and the import's commit: the recount, a later
 * statement with a later snapshot, sees exactly the rows that will be there. Comments move
 * comment_count by an UPDATE of the feature row, which waits for the same lock. Voters are
 * recounted by recountVoters (owner merge's own recount): it locks the voter rows first and
 * counts in the next statement, so a live vote of that voter on another feature either
 * committed before (and is counted) or waits for the lock and then adds its own increment;
 * the voter-count shards move by the difference (had a vote before / has one after).
 */
import { sql } from "kysely";
import { milestoneAtOrBelowSql } from "../../../events/milestones.ts";
import { recountFeatures, recountVoters } from "../../features/index.ts";
import type { WriteContext } from "./context.ts";

/** Locks the features `ids` (FOR NO KEY UPDATE, id order), as a vote does before it writes. */
export async function lockFeatures(ctx: WriteContext, ids: Iterable<number>): Promise<void> {
  const list = [...new Set(ids)].sort((a, b) => a - b);
  for (let i = 0; i < list.length; i += 10_000) {
    await ctx.trx
      .selectFrom("features")
      .select("id")
      .where("id", "=", sql<number>`any(${list.slice(i, i + 10_000)}::int[])`)
      .orderBy("id")
      .forNoKeyUpdate()
      .execute();
  }
}

export async function recountTouched(ctx: WriteContext, featureIds: Iterable<number>, voterIds: Iterable<number>): Promise<void> {
  const features = [...new Set(featureIds)].sort((a, b) => a - b);
  for (let i = 0; i < features.length; i += 10_000) {
    const batch = features.slice(i, i + 10_000);
    await recountFeatures(ctx.trx, batch);
    await sql`UPDATE features SET
        comment_count = (SELECT count(*)::int FROM comments WHERE comments.feature_id = features.id),
        vote_milestone = greatest(vote_milestone, ${milestoneAtOrBelowSql(sql.ref("vote_count"))})
      WHERE id = any(${batch}::int[])`.execute(ctx.trx);
  }
  await recountVoters(ctx.trx, ctx.projectId, [...voterIds]);
}
