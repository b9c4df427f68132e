/**
 * The import runner (imports-v3.md, "How an import runs"): every server process and
 * `npm run worker` run one; `npm run admin -- import-from` runs its own job through
 * runImportJob. A runner claims the oldest unfinished import of a project under a lease
 * (imports.repository.ts claimImport), renews the lease every third of IMPORT_LEASE_SECONDS while
 * it works, reads the export, and writes it in one transaction that also marks the job
 * succeeded and records `import.completed`: readers see the board before the import or after it,
 * and a runner that dies leaves nothing (its transaction never committed); the job is claimed
 * again once the lease has run out, at most three attempts in all, then it is failed. A dry run
 * makes the same writes and rolls them back, so its counts are the real run's.
 *
 * Progress is written to the row from another connection, at most every PROGRESS_INTERVAL_MS,
 * while the job's transaction is open. The embedded database has one connection, held by that
 * transaction: there progress is kept in `liveProgress` (this process is the only one) and the
 * routes read it from there.
 */
import type { Kysely } from "kysely";
import { sql } from "kysely";
import type { Logger } from "pino";
import type { Database } from "../../../db/schema.ts";
import { recordEvents } from "../../events/outbox.ts";
import type { AppCaches } from "../../lib/data/app-caches.ts";
import { notifyCacheInvalidation } from "../../lib/data/app-caches.ts";
import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import type { ContentRevisions } from "../../store/store.types.ts";
import { type ImportData, ImportFileError, type ImportOptions, type ImportSourceName } from "./import-data.ts";
import { toImport } from "./imports.mapper.ts";
import {
  claimImport,
  findImportById,
  finishImport,
  generateLeaseToken,
  type ImportOutcome,
  type ImportRow,
  MAX_IMPORT_ATTEMPTS,
  readImportFileRow,
  recordProgress,
  renewLease,
} from "./imports.repository.ts";
import { readImportFile } from "./readers/index.ts";
import { writeImport } from "./writer/index.ts";

/** Source records one import may hold (imports-v3.md, rule 6 "Bounded"). */
export const MAX_IMPORT_RECORDS = 200_000;

/** The source records of `data`: what progress counts and rule 6 bounds. */
export function sourceRecordCount(data: ImportData): number {
  return (
    data.people.length +
    data.boards.length +
    data.tags.length +
    data.features.length +
    data.votes.length +
    data.comments.length +
    data.releases.length +
    data.subscriptions.length
  );
}

/** Milliseconds between two progress writes of one job. */
export const PROGRESS_INTERVAL_MS = 500;

/** What a runner uses of the process's dependencies. */
export interface ImportJobDeps {
  db: Kysely<Database>;
  config: { DATABASE_URL?: string | undefined; IMPORT_LEASE_SECONDS: number; IMPORT_POLL_INTERVAL_MS: number };
  logger: Logger;
  /** Retires the project's cached answers on every instance after a committed import. */
  contentRevisions?: ContentRevisions;
  caches?: AppCaches;
  now?: () => Date;
  /** Progress of the jobs this process runs, by import id (read by the routes on the embedded database). */
  liveProgress?: Map<string, { done: number; total: number | null }>;
  /**
   * The reading and writing steps (default: readers/ and writer/); tests put steps of their own
   * in to check the job's rules (one transaction, dry run, attempts) apart from the mapping.
   */
  steps?: { read: typeof readImportFile; write: typeof writeImport };
}

/** A run's observer: the command line's progress bar. */
export type ProgressListener = (done: number, total: number | null) => void;

class LeaseLost extends Error {}
class DryRunDone extends Error {
  constructor(readonly outcome: ImportOutcome) {
    super("dry run: rolled back");
  }
}

const emptyProgress = { done: 0, total: null };

function failure(code: string, field: string | null, message: string, progress = emptyProgress): ImportOutcome {
  return { status: "failed", counts: null, warnings: [], warningCount: 0, error: { code, field, message }, progress };
}

/**
 * Ends job `job` as `outcome` under lease `token` (null: a job with no lease, created for the
 * command line), recording `import.completed` in the same transaction unless it is a dry run.
 */
async function endJob(deps: ImportJobDeps, job: ImportRow, token: string | null, outcome: ImportOutcome): Promise<ImportRow | undefined> {
  return deps.db.transaction().execute(async (trx) => {
    const row = await finishImport(trx, job.id, token, outcome);
    if (row && !row.dry_run) await recordEvents(trx, row.project_id, [{ type: "import.completed", object: toImport(row) }]);
    return row;
  });
}

/**
 * Runs claimed job `job` (held under lease `token`) to its end and returns the row after, or
 * undefined when the lease was lost to another runner (which then owns the job). Never throws for
 * a failed import: a bad file fails the job with validation_failed naming `file`; an unexpected
 * error gives the job back for another attempt, or fails it after the third.
 */
export async function runClaimedImport(
  deps: ImportJobDeps,
  job: ImportRow & { has_file: boolean },
  token: string,
  onProgress?: ProgressListener,
): Promise<ImportRow | undefined> {
  const { db, logger, config } = deps;
  const embedded = !config.DATABASE_URL;
  if (job.attempts > MAX_IMPORT_ATTEMPTS) {
    const message = `the import stopped before its end ${MAX_IMPORT_ATTEMPTS} times (a process running it ended); nothing was written`;
    return endJob(deps, job, token, failure("internal", null, message));
  }
  if (!job.has_file) {
    const message =
      "the Canny export could not be fetched: the process that received the request stopped before storing it, and the API key " +
      "was not kept; send the request again";
    return endJob(deps, job, token, failure("internal", "api_key", message));
  }

  const lease = holdLease(deps, job.id, token);

  let progress: { done: number; total: number | null } = { done: 0, total: null };
  let lastWrite = 0;
  const report = (done: number, total: number | null) => {
    progress = { done, total };
    onProgress?.(done, total);
    deps.liveProgress?.set(job.id, progress);
    if (embedded) return;
    const at = Date.now();
    if (at - lastWrite < PROGRESS_INTERVAL_MS && done !== total) return;
    lastWrite = at;
    recordProgress(db, job.id, token, done, total).catch((error) =>
      logger.warn({ err: error, import_id: job.id }, "import: progress not recorded"),
    );
  };

  try {
    const file = await readImportFileRow(db, job.id);
    if (!file) return await endJob(deps, job, token, failure("internal", "file", "the export is missing"));
    const source = job.source as ImportSourceName;
    const options: ImportOptions = {
      boards: job.options.boards,
      statusMap: job.options.status_map as ImportOptions["statusMap"],
    };
    let data: Awaited<ReturnType<typeof readImportFile>>;
    try {
      data = await (deps.steps?.read ?? readImportFile)({ source, file: file.bytes, fileName: file.file_name });
    } catch (error) {
      if (!(error instanceof ImportFileError)) throw error;
      return await endJob(deps, job, token, failure("validation_failed", "file", `file: ${error.message}`));
    }
    const records = sourceRecordCount(data);
    if (records > MAX_IMPORT_RECORDS) {
      const message = `file: ${records.toLocaleString("en-US")} records; an import takes at most ${MAX_IMPORT_RECORDS.toLocaleString("en-US")}`;
      return await endJob(deps, job, token, failure("validation_failed", "file", message));
    }
    report(0, records);
    const now = deps.now?.() ?? new Date();
    let ended: ImportRow | undefined;
    try {
      ended = await withProjectWriteLock(db, job.project_id, async (trx) => {
        // One transaction for the whole import: its statements are not bound by the request limits.
        await sql`SELECT set_config('statement_timeout', '0', true), set_config('lock_timeout', '0', true)`.execute(trx);
        const result = await (deps.steps?.write ?? writeImport)(trx, {
          projectId: job.project_id,
          source,
          data,
          options,
          now,
          onProgress: report,
        });
        const outcome: ImportOutcome = {
          status: "succeeded",
          counts: result.counts,
          warnings: result.warnings,
          warningCount: result.warningCount,
          error: null,
          progress: { done: records, total: records },
        };
        if (job.dry_run) throw new DryRunDone(outcome);
        if (lease.lost()) throw new LeaseLost();
        const row = await finishImport(trx, job.id, token, outcome);
        if (!row) throw new LeaseLost();
        await recordEvents(trx, job.project_id, [{ type: "import.completed", object: toImport(row) }]);
        return row;
      });
    } catch (error) {
      if (!(error instanceof DryRunDone)) throw error;
      ended = await endJob(deps, job, token, error.outcome);
    }
    if (ended && !ended.dry_run) await retireCachedAnswers(deps, job.project_id);
    return ended;
  } catch (error) {
    if (error instanceof LeaseLost) {
      logger.warn({ import_id: job.id }, "import: lease lost to another runner; rolled back");
      return undefined;
    }
    logger.error({ err: error, import_id: job.id, attempt: job.attempts }, "import: attempt failed");
    if (job.attempts >= MAX_IMPORT_ATTEMPTS) {
      const message = `the import failed ${MAX_IMPORT_ATTEMPTS} times; nothing was written (last error: ${error instanceof Error ? error.message : String(error)})`;
      return endJob(deps, job, token, failure("internal", null, message));
    }
    // Given back at once: the next runner to look takes it.
    await db
      .updateTable("imports")
      .set({ lease_owner: null, lease_until: null })
      .where("id", "=", job.id)
      .where("lease_owner", "=", token)
      .execute();
    return undefined;
  } finally {
    lease.stop();
    deps.liveProgress?.delete(job.id);
  }
}

/**
 * Keeps the lease `token` holds on job `importId`, renewed every third of IMPORT_LEASE_SECONDS,
 * until `stop()`. `lost()` turns true once a renewal finds the lease taken by another runner.
 */
export function holdLease(
  deps: Pick<ImportJobDeps, "db" | "config" | "logger">,
  importId: string,
  token: string,
): { lost(): boolean; stop(): void } {
  let lost = false;
  const renewal = setInterval(
    () => {
      renewLease(deps.db, importId, token, deps.config.IMPORT_LEASE_SECONDS)
        .then((held) => {
          if (!held) lost = true;
        })
        .catch((error) => deps.logger.warn({ err: error, import_id: importId }, "import: lease renewal failed"));
    },
    Math.max(500, (deps.config.IMPORT_LEASE_SECONDS * 1000) / 3),
  );
  renewal.unref();
  return { lost: () => lost, stop: () => clearInterval(renewal) };
}

/**
 * After a committed import: a new content revision and lookups revision of the project (voters,
 * boards and tags may all have changed), and the notice that clears every instance's caches, as
 * an owner write does (src/middleware/owner-change.ts, shared-read-cache.ts).
 */
async function retireCachedAnswers(deps: ImportJobDeps, projectId: number): Promise<void> {
  try {
    const bumped = await deps.contentRevisions?.bump(projectId, { lookups: true });
    if (bumped === false) deps.caches?.responses?.clear();
    await notifyCacheInvalidation(deps.db, deps.caches);
  } catch (error) {
    deps.logger.warn({ err: error, project_id: projectId }, "import: cached answers not retired");
  }
}

/**
 * Claims and runs job `importId` in this process (the command line; `heldToken`: the lease it was
 * created under), waiting while an older import of its project runs; returns the row at its end.
 * Throws when the job does not exist.
 */
export async function runImportJob(
  deps: ImportJobDeps,
  importId: string,
  onProgress?: ProgressListener,
  heldToken?: string,
): Promise<ImportRow> {
  for (;;) {
    const token = heldToken ?? generateLeaseToken();
    const job = await claimImport(deps.db, token, deps.config.IMPORT_LEASE_SECONDS, importId);
    if (job) {
      const ended = await runClaimedImport(deps, job, token, onProgress);
      if (ended) return ended;
    }
    const row = await deps.db.selectFrom("imports").select(["status"]).where("id", "=", importId).executeTakeFirst();
    if (!row) throw new Error(`no import ${importId}`);
    if (row.status === "succeeded" || row.status === "failed") return (await findImportById(deps.db, importId)) as ImportRow;
    await new Promise((resolve) => setTimeout(resolve, deps.config.IMPORT_POLL_INTERVAL_MS));
  }
}

/** A process's import runner: one job at a time; stop() waits for the one under way (at most `graceMs`). */
export class ImportWorker {
  private stopping = false;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;

  constructor(private readonly deps: ImportJobDeps) {}

  start(): void {
    this.loop = this.run();
  }

  /** Looks for a queued import now instead of at the next poll (a new import on this process). */
  wake(): void {
    this.wakeUp?.();
  }

  async stop(graceMs = 5000): Promise<void> {
    this.stopping = true;
    this.wake();
    let timer: NodeJS.Timeout | undefined;
    // A job cut short by the process ending leaves nothing: its lease runs out and another runner takes it.
    await Promise.race([this.loop, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let ran = false;
      try {
        const token = generateLeaseToken();
        const job = await claimImport(this.deps.db, token, this.deps.config.IMPORT_LEASE_SECONDS);
        if (job) {
          ran = true;
          await runClaimedImport(this.deps, job, token);
        }
      } catch (error) {
        if (this.stopping) break;
        this.deps.logger.error({ err: error }, "import runner: round failed; trying again later");
      }
      if (!ran && !this.stopping) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.deps.config.IMPORT_POLL_INTERVAL_MS);
          this.wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wakeUp = undefined;
      }
    }
  }
}

/** Starts this process's import runner. */
export function startImportWorker(deps: ImportJobDeps): ImportWorker {
  const worker = new ImportWorker(deps);
  worker.start();
  return worker;
}
