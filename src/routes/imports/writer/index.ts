/**
 * The import writer (imports-v3.md, "How an import runs" rules 2, 4, 5, 7 and "Mapping"): maps
 * one normalised ImportData onto a project inside the caller's transaction, which it never
 * commits: the job runner commits it, or rolls it back for a dry run, so a dry run's counts and
 * warnings equal a real run's exactly.
 *
 * Order: the project's write lock (shared, as every write takes it) and the owner scope locks
 * (tags, boards, releases: the names and slugs it checks stay free), the features of this source
 * an earlier run made locked in id order (before any voter row, the order a vote locks in), then
 * voters, tags and boards, features, votes, comments, subscriptions, merges (after
 * subscriptions, so a duplicate's subscribers move with its votes), releases, and the counters.
 * Nothing here records an event, a notification or an email (rule 7: the job records
 * import.completed itself).
 *
 * Returns counts per kind ({created, updated, skipped}; a record an earlier run made and still
 * there counts `updated`, one deleted or withdrawn since `skipped`), the first 1000 warnings
 * (the reader's first) and the number of all warnings. Errors of the database propagate (the
 * job fails and its transaction is rolled back).
 */
import { sql, type Transaction } from "kysely";
import type { Database } from "../../../../db/schema.ts";
import { lockProjectScope } from "../../../lib/data/owner-locks.ts";
import { LOCK_CLASS } from "../../../lib/data/project-write-lock.ts";
import type { ImportCountKind, ImportData, ImportOptions, ImportSourceName, ImportWarning } from "../import-data.ts";
import { tagsToWrite, writeCustomBoards, writeTags } from "./catalog.ts";
import { writeComments } from "./comments.ts";
import { existingIds, openContext } from "./context.ts";
import { lockFeatures, recountTouched } from "./counters.ts";
import { writeFeatures } from "./features.ts";
import { writeMerges } from "./merges.ts";
import { writeReleases } from "./releases.ts";
import { writeSubscriptions } from "./subscriptions.ts";
import { placeholderVoter, writeVoters } from "./voters.ts";
import { writeVotes } from "./votes.ts";

export { IMPORTED_USER } from "./voters.ts";

export interface WriteImportResult {
  counts: Record<ImportCountKind, { created: number; updated: number; skipped: number }>;
  /** The first 1000 warnings, the reader's first. */
  warnings: ImportWarning[];
  warningCount: number;
}

export async function writeImport(
  trx: Transaction<Database>,
  args: {
    projectId: number;
    source: ImportSourceName;
    data: ImportData;
    options: ImportOptions;
    now: Date;
    onProgress?: (done: number, total: number) => void;
  },
): Promise<WriteImportResult> {
  const { data, projectId } = args;
  const total =
    data.people.length +
    data.boards.length +
    data.tags.length +
    data.features.length +
    data.votes.length +
    data.comments.length +
    data.releases.length +
    data.subscriptions.length;
  const ctx = await openContext({ ...args, trx, total });
  for (const warning of data.warnings) ctx.warn(warning.path, warning.message);
  for (const [kind, n] of Object.entries(data.skipped) as [ImportCountKind, number][]) ctx.counts[kind].skipped += n;

  await sql`SELECT pg_advisory_xact_lock_shared(${LOCK_CLASS}::int, ${projectId}::int)`.execute(trx);
  for (const scope of ["tags", "boards", "releases"] as const) await lockProjectScope(trx, scope, projectId);
  // Features an earlier run made, and where any of them was merged since: locked before voters.
  const mappedFeatures = [...ctx.mapped.feature.values()].map((m) => m.target);
  const merges = await trx.selectFrom("feature_merges").select(["source_id", "target_id"]).where("project_id", "=", projectId).execute();
  const mergedInto = new Map(merges.map((row) => [row.source_id, row.target_id]));
  const alive = await existingIds(trx, "features", projectId, mappedFeatures);
  await lockFeatures(ctx, [...alive, ...[...alive].flatMap((id) => (mergedInto.has(id) ? [mergedInto.get(id)!] : []))]);

  const voters = await writeVoters(ctx, data.people);
  const tags = await writeTags(ctx, tagsToWrite(ctx, data.tags, data.boards));
  const boards = args.options.boards === "custom" ? await writeCustomBoards(ctx, data.boards) : new Map();
  const features = await writeFeatures(ctx, data.features, { voters, tags, boards });
  const votes = await writeVotes(ctx, data.votes, { features: features.bySource, voters, mergedInto });
  let placeholder: Promise<number | undefined> | undefined;
  const comments = await writeComments(ctx, data.comments, {
    features: features.bySource,
    voters,
    placeholder: () => {
      placeholder ??= placeholderVoter(ctx);
      return placeholder;
    },
  });
  await writeSubscriptions(ctx, {
    subscriptions: data.subscriptions,
    features: features.bySource,
    created: features.all.filter((f) => f.created),
    voters,
    votes,
    comments,
  });
  const mergeTargets = await writeMerges(ctx, data.features, features.bySource);
  await writeReleases(ctx, data.releases, features.bySource);
  await recountTouched(
    ctx,
    [...features.all.map((f) => f.id), ...votes.map((v) => v.featureId), ...mergeTargets],
    votes.map((v) => v.voterId),
  );
  await ctx.flushMappings();
  // A merge moved its duplicate's votes to the original: their mappings follow them there (what
  // the snapshot's import_source on a vote names).
  await sql`UPDATE import_sources s SET target_id = m.target_id
    FROM feature_merges m
    WHERE s.project_id = ${projectId} AND s.kind = 'vote' AND m.project_id = ${projectId} AND s.target_id = m.source_id`.execute(trx);
  ctx.finish();
  return { counts: ctx.counts, warnings: ctx.warnings, warningCount: ctx.warningCount() };
}
