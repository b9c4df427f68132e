/**
 * Source votes -> votes (imports-v3.md, "Mapping", Votes): each keeps its time and weighs the
 * voter's tier multiplier (1 without a tier), as a cast does. A second vote of one voter on one
 * feature is skipped (in the source, or a vote the voter already holds here); a vote for an
 * unknown post or by an unknown person is skipped with a warning; a vote an earlier run imported
 * is remembered (import_sources), so one withdrawn since is not brought back. Counters are set
 * afterwards (counters.ts), not per vote.
 */
import { sql } from "kysely";
import type { ImportVote } from "../import-data.ts";
import { BATCH, parseTime, type WriteContext } from "./context.ts";
import type { WrittenFeature } from "./features.ts";

/** The mapping key of a vote, which has no id of its own in any source: `["<post id>","<person id>"]`. */
export const voteKey = (vote: { featureSourceId: string; personSourceId: string }) =>
  JSON.stringify([vote.featureSourceId, vote.personSourceId]);

/** A vote this run inserted, for subscriptions. */
export interface WrittenVote {
  featureId: number;
  voterId: number;
}

/**
 * Writes `votes`; `mergedInto` maps a feature merged before this run to its original (a vote
 * for a duplicate goes where the duplicate's votes went). Returns the (feature, voter) pairs
 * inserted.
 */
export async function writeVotes(
  ctx: WriteContext,
  votes: ImportVote[],
  deps: { features: Map<string, WrittenFeature>; voters: Map<string, number>; mergedInto: Map<number, number> },
): Promise<WrittenVote[]> {
  const inserted: WrittenVote[] = [];
  const seen = new Set<string>();
  let batch: { key: string; featureId: number; voterId: number; at: Date }[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const rows = batch;
    batch = [];
    const result = await sql<{
      feature_id: number;
      voter_id: number;
    }>`INSERT INTO votes (feature_id, voter_id, project_id, weight, created_at)
      SELECT v.feature_id, v.voter_id, ${ctx.projectId}::int, coalesce(t.multiplier, 1), v.at
      FROM unnest(${rows.map((r) => r.featureId)}::int[], ${rows.map((r) => r.voterId)}::int[], ${rows.map((r) => r.at.toISOString())}::timestamptz[])
        AS v(feature_id, voter_id, at)
      JOIN voters ON voters.id = v.voter_id
      LEFT JOIN tiers t ON t.id = voters.tier_id
      ON CONFLICT (feature_id, voter_id) DO NOTHING
      RETURNING feature_id, voter_id`.execute(ctx.trx);
    const made = new Set(result.rows.map((r) => `${r.feature_id}:${r.voter_id}`));
    for (const row of rows) {
      ctx.remember("vote", row.key, row.featureId, row.voterId);
      if (made.has(`${row.featureId}:${row.voterId}`)) {
        ctx.counts.votes.created += 1;
        inserted.push({ featureId: row.featureId, voterId: row.voterId });
      } else {
        // The voter holds a vote on it already (cast here, or another person of theirs).
        ctx.counts.votes.skipped += 1;
      }
    }
  };
  for (const vote of votes) {
    ctx.tick();
    const key = voteKey(vote);
    if (seen.has(key)) {
      ctx.counts.votes.skipped += 1;
      continue;
    }
    seen.add(key);
    if (ctx.mapped.vote.has(key)) {
      // Imported before: still there, or withdrawn since (not brought back).
      ctx.counts.votes.skipped += 1;
      continue;
    }
    const feature = deps.features.get(vote.featureSourceId);
    if (!feature) {
      ctx.counts.votes.skipped += 1;
      ctx.warn(vote.path, `vote for unknown post "${vote.featureSourceId}": skipped`);
      continue;
    }
    const voterId = deps.voters.get(vote.personSourceId);
    if (voterId === undefined) {
      ctx.counts.votes.skipped += 1;
      ctx.warn(vote.path, `vote by unknown person "${vote.personSourceId}": skipped`);
      continue;
    }
    const at = parseTime(vote.createdAt, ctx.now);
    if (at === undefined) {
      ctx.counts.votes.skipped += 1;
      ctx.warn(vote.path, `created_at "${vote.createdAt}" does not parse: skipped`);
      continue;
    }
    const featureId = deps.mergedInto.get(feature.id) ?? feature.id;
    batch.push({ key, featureId, voterId, at });
    if (batch.length >= BATCH) await flush();
  }
  await flush();
  return inserted;
}
