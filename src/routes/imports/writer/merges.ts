/**
 * Duplicates -> merges (imports-v3.md, "Mapping", Duplicates; owner-api-v3.md, merge): each
 * duplicate is merged into the last original of its chain (A -> B -> C: A and B into C) by the
 * owner's merge core (mergeFeature: feature_merges rows, votes moved with a voter's second vote
 * dropped, subscribers moved, the duplicate archived, counters recomputed), which records no
 * event. A cycle is broken at its first member in source order, with a warning.
 */
import { mergeFeature } from "../../features/index.ts";
import type { ImportFeature } from "../import-data.ts";
import type { WriteContext } from "./context.ts";
import type { WrittenFeature } from "./features.ts";

/** Source id -> the source id of the last original of its chain, for every duplicate. */
export function resolveChains(ctx: WriteContext, features: ImportFeature[]): Map<string, string> {
  const order = new Map<string, number>();
  const next = new Map<string, string>();
  const pathOf = new Map<string, string>();
  features.forEach((f, i) => {
    if (f.sourceId === null || order.has(f.sourceId)) return;
    order.set(f.sourceId, i);
    pathOf.set(f.sourceId, f.path);
    if (f.mergedIntoSourceId !== null) next.set(f.sourceId, f.mergedIntoSourceId);
  });
  // Break every cycle at its first member in source order.
  for (const start of [...next.keys()]) {
    const walked: string[] = [];
    let at: string | undefined = start;
    while (at !== undefined && !walked.includes(at)) {
      walked.push(at);
      at = next.get(at);
    }
    if (at === undefined) continue;
    const cycle = walked.slice(walked.indexOf(at));
    const first = cycle.reduce((a, b) => ((order.get(a) ?? 0) <= (order.get(b) ?? 0) ? a : b));
    next.delete(first);
    ctx.warn(pathOf.get(first) ?? first, `merge cycle (${cycle.join(" -> ")}) broken: "${first}" stays an original`);
  }
  const finals = new Map<string, string>();
  for (const start of next.keys()) {
    let at = start;
    for (let hop = next.get(at); hop !== undefined; hop = next.get(at)) at = hop;
    if (at !== start) finals.set(start, at);
  }
  return finals;
}

/** Applies the merges; returns the ids of originals that took votes (for counters). */
export async function writeMerges(ctx: WriteContext, features: ImportFeature[], written: Map<string, WrittenFeature>): Promise<number[]> {
  const finals = resolveChains(ctx, features);
  const targets: number[] = [];
  const paths = new Map(features.flatMap((f) => (f.sourceId === null ? [] : [[f.sourceId, f.path] as const])));
  for (const [duplicateSource, originalSource] of finals) {
    const path = paths.get(duplicateSource) ?? duplicateSource;
    const duplicate = written.get(duplicateSource);
    const original = written.get(originalSource);
    if (!duplicate) {
      ctx.counts.merges.skipped += 1;
      continue;
    }
    if (!original) {
      ctx.counts.merges.skipped += 1;
      ctx.warn(path, `merged into unknown post "${originalSource}": not merged`);
      continue;
    }
    const already = await ctx.trx.selectFrom("feature_merges").select("target_id").where("source_id", "=", duplicate.id).executeTakeFirst();
    if (already) {
      if (already.target_id === original.id) ctx.counts.merges.updated += 1;
      else {
        ctx.counts.merges.skipped += 1;
        ctx.warn(path, "merged into another feature on this board since: left as it is");
      }
      continue;
    }
    const outcome = await mergeFeature(ctx.trx, ctx.projectId, duplicate.id, original.id, ctx.now);
    if (outcome.kind === "merged") {
      ctx.counts.merges.created += 1;
      targets.push(original.id);
    } else {
      ctx.counts.merges.skipped += 1;
      ctx.warn(path, `not merged: ${outcome.kind === "conflict" ? outcome.message : outcome.kind.replace("_", " ")}`);
    }
  }
  return targets;
}
