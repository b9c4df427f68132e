/**
 * Subscriptions of imported voters (imports-v3.md, "Mapping", Subscriptions; engagement-api-v3.md,
 * "Subscriptions"): the source's opt-outs first (a row with opted_out true, as DELETE
 * .../subscription leaves it, so nothing below subscribes them again), then the source's active
 * follows (reason `manual`), then the author of each feature this run created (`author`), each
 * voter of a vote it inserted (`vote`) and each author of a comment it inserted (`comment`).
 * Every insert is ON CONFLICT (feature_id, voter_id) DO NOTHING: an existing row (a subscription,
 * or an opt-out) keeps its reason and time. No notification, event or email is written.
 */
import { sql } from "kysely";
import type { SubscriptionReason } from "../../../../db/schema.ts";
import type { ImportSubscription } from "../import-data.ts";
import { BATCH, type WriteContext } from "./context.ts";
import type { WrittenFeature } from "./features.ts";

interface Row {
  featureId: number;
  voterId: number;
  reason: SubscriptionReason;
  optedOut: boolean;
}

export async function writeSubscriptions(
  ctx: WriteContext,
  input: {
    subscriptions: ImportSubscription[];
    features: Map<string, WrittenFeature>;
    created: WrittenFeature[];
    voters: Map<string, number>;
    votes: { featureId: number; voterId: number }[];
    comments: { featureId: number; voterId: number }[];
  },
): Promise<void> {
  const rows: Row[] = [];
  // Opt-outs and explicit follows come from the source and are counted; the rest follow from it.
  const counted = new Set<Row>();
  for (const active of [false, true]) {
    for (const s of input.subscriptions) {
      if (s.active !== active) continue;
      ctx.tick();
      const feature = input.features.get(s.featureSourceId);
      const voterId = input.voters.get(s.personSourceId);
      if (!feature || voterId === undefined) {
        ctx.counts.subscriptions.skipped += 1;
        ctx.warn(s.path, `subscription of unknown ${feature ? "person" : "post"}: skipped`);
        continue;
      }
      const row: Row = { featureId: feature.id, voterId, reason: "manual", optedOut: !active };
      counted.add(row);
      rows.push(row);
    }
  }
  for (const f of input.created) {
    const author = f.feature.authorSourceId === null ? undefined : input.voters.get(f.feature.authorSourceId);
    if (author !== undefined) rows.push({ featureId: f.id, voterId: author, reason: "author", optedOut: false });
  }
  for (const v of input.votes) rows.push({ ...v, reason: "vote", optedOut: false });
  for (const c of input.comments) rows.push({ ...c, reason: "comment", optedOut: false });

  const seen = new Set<string>();
  const unique = rows.filter((row) => {
    const key = `${row.featureId}:${row.voterId}`;
    if (seen.has(key)) {
      if (counted.has(row)) ctx.counts.subscriptions.skipped += 1;
      return false;
    }
    seen.add(key);
    return true;
  });
  for (let i = 0; i < unique.length; i += BATCH) {
    const batch = unique.slice(i, i + BATCH);
    const result = await sql<{
      feature_id: number;
      voter_id: number;
    }>`INSERT INTO subscriptions (feature_id, voter_id, project_id, reason, opted_out, created_at)
      SELECT s.feature_id, s.voter_id, ${ctx.projectId}::int, s.reason, s.opted_out = 1, ${ctx.now}::timestamptz
      FROM unnest(${batch.map((r) => r.featureId)}::int[], ${batch.map((r) => r.voterId)}::int[], ${batch.map((r) => r.reason)}::text[],
        ${batch.map((r) => (r.optedOut ? 1 : 0))}::int[]) AS s(feature_id, voter_id, reason, opted_out)
      ON CONFLICT (feature_id, voter_id) DO NOTHING
      RETURNING feature_id, voter_id`.execute(ctx.trx);
    const made = new Set(result.rows.map((r) => `${r.feature_id}:${r.voter_id}`));
    for (const row of batch) {
      if (made.has(`${row.featureId}:${row.voterId}`)) ctx.counts.subscriptions.created += 1;
      else ctx.counts.subscriptions.skipped += 1;
    }
  }
}
