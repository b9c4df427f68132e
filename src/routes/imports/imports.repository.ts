/**
 * The imports area's queries (imports-v3.md, "How an import runs"): creating a job with its
 * export, listing and reading jobs, and the runner's claim, lease renewal, progress and end.
 * Leases are judged by the database's clock (`now()`), the same for every instance.
 */
import { randomBytes } from "node:crypto";
import type { Selectable } from "kysely";
import { type Kysely, sql, type Transaction } from "kysely";
import type { Database, ImportsTable } from "../../../db/schema.ts";

export type ImportRow = Omit<Selectable<ImportsTable>, "seq" | "lease_owner" | "lease_until" | "project_id"> & { project_id: number };

/** Attempts a job gets before it is failed (imports-v3.md, "How an import runs", rule 1). */
export const MAX_IMPORT_ATTEMPTS = 3;
/** Warnings kept on the row (ImportObject.warnings: the first 1,000). */
export const MAX_KEPT_WARNINGS = 1000;

const columns = [
  "id",
  "project_id",
  "source",
  "dry_run",
  "status",
  "options",
  "progress_done",
  "progress_total",
  "counts",
  "warnings",
  "warning_count",
  "error",
  "attempts",
  "created_at",
  "started_at",
  "finished_at",
] as const;

/** A new public import id: `imp_` + 16 random bytes in base64url. */
export function generateImportId(): string {
  return `imp_${randomBytes(16).toString("base64url")}`;
}

/** A new runner token: what `lease_owner` holds while one process runs a job. */
export function generateLeaseToken(): string {
  return randomBytes(12).toString("base64url");
}

const json = (value: unknown) => sql<string>`${JSON.stringify(value)}::text::jsonb`;

export interface NewImport {
  projectId: number;
  source: string;
  dryRun: boolean;
  options: { boards: "roadmap" | "custom"; status_map: Record<string, string> };
  /** The export; null when the creator fetches it first (Canny's API), holding `lease`. */
  file: { name: string | null; bytes: Uint8Array } | null;
  /** A lease the creator holds from the start (while it fetches the export): `{token, seconds}`. */
  lease?: { token: string; seconds: number };
}

/** Inserts a queued import (and its file) in one transaction; returns its row. */
export async function insertImport(db: Kysely<Database>, input: NewImport): Promise<ImportRow> {
  const id = generateImportId();
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto("imports")
      .values({
        id,
        project_id: input.projectId,
        source: input.source,
        dry_run: input.dryRun,
        options: json(input.options),
        ...(input.lease
          ? { lease_owner: input.lease.token, lease_until: sql<Date>`now() + make_interval(secs => ${input.lease.seconds})` }
          : {}),
      })
      .returning(columns)
      .executeTakeFirstOrThrow();
    if (input.file)
      await trx.insertInto("import_files").values({ import_id: id, file_name: input.file.name, bytes: input.file.bytes }).execute();
    return row;
  });
}

/** Stores the export a creator fetched, and gives its lease back so that a runner claims the job. */
export async function storeFetchedFile(db: Kysely<Database>, importId: string, token: string, bytes: Uint8Array): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const freed = await trx
      .updateTable("imports")
      .set({ lease_owner: null, lease_until: null })
      .where("id", "=", importId)
      .where("lease_owner", "=", token)
      .where("status", "=", "queued")
      .executeTakeFirst();
    if (Number(freed.numUpdatedRows) !== 1) return false;
    await trx.insertInto("import_files").values({ import_id: importId, file_name: null, bytes }).execute();
    return true;
  });
}

/** Page `page` of the project's imports, newest first, and how many there are. */
export async function listImports(db: Kysely<Database>, projectId: number, request: { page: number; per_page: number }) {
  const [rows, total] = await Promise.all([
    db
      .selectFrom("imports")
      .select(columns)
      .where("project_id", "=", projectId)
      .orderBy("seq", "desc")
      .limit(request.per_page)
      .offset((request.page - 1) * request.per_page)
      .execute(),
    db
      .selectFrom("imports")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("project_id", "=", projectId)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

/** One import of the project, or undefined. */
export function findImport(db: Kysely<Database>, projectId: number, importId: string): Promise<ImportRow | undefined> {
  return db.selectFrom("imports").select(columns).where("project_id", "=", projectId).where("id", "=", importId).executeTakeFirst();
}

/** An import by id whatever its project (the command line's own job). */
export function findImportById(db: Kysely<Database>, importId: string): Promise<ImportRow | undefined> {
  return db.selectFrom("imports").select(columns).where("id", "=", importId).executeTakeFirst();
}

/**
 * Claims one job under lease `token` for `leaseSeconds` (imports-v3.md, rule 1): the oldest
 * unfinished import of a project, when no lease on it is in force, and only when no older import
 * of its project is unfinished, so a project's imports run one at a time in order of creation.
 * `onlyId` restricts the claim to one job (the command line runs its own, created under a lease
 * with `token` so that no server's runner takes it first). The claim adds one
 * attempt and marks the job running; it commits before the work begins, so a runner that dies
 * leaves a job whose lease runs out.
 */
export async function claimImport(
  db: Kysely<Database>,
  token: string,
  leaseSeconds: number,
  onlyId?: string,
): Promise<(ImportRow & { has_file: boolean }) | undefined> {
  const only = onlyId === undefined ? sql`` : sql`AND i.id = ${onlyId}`;
  // A job created under lease `token` (the command line's own) is claimed by its creator at once.
  const { rows } = await sql<ImportRow & { has_file: boolean }>`
    WITH candidate AS (
      SELECT i.id FROM imports i
      WHERE i.status IN ('queued', 'running')
        AND (i.lease_until IS NULL OR i.lease_until < now() OR i.lease_owner = ${token})
        AND NOT EXISTS (
          SELECT 1 FROM imports o
          WHERE o.project_id = i.project_id AND o.status IN ('queued', 'running') AND o.seq < i.seq
        )
        ${only}
      ORDER BY i.seq
      LIMIT 1
      FOR UPDATE OF i SKIP LOCKED
    )
    UPDATE imports SET
      lease_owner = ${token},
      lease_until = now() + make_interval(secs => ${leaseSeconds}),
      attempts = imports.attempts + 1,
      status = 'running',
      started_at = now(),
      progress_done = 0,
      progress_total = NULL
    FROM candidate WHERE imports.id = candidate.id
    RETURNING ${sql.join(columns.map((c) => sql`imports.${sql.ref(c)}`))},
      EXISTS (SELECT 1 FROM import_files f WHERE f.import_id = imports.id) AS has_file`.execute(db);
  return rows[0];
}

/** The export of a job: its bytes and file name, or undefined when none was stored. */
export function readImportFileRow(db: Kysely<Database>, importId: string) {
  return db.selectFrom("import_files").select(["bytes", "file_name"]).where("import_id", "=", importId).executeTakeFirst();
}

/** Pushes the lease of a job this runner holds; false when it is no longer held (another runner took it). */
export async function renewLease(db: Kysely<Database>, importId: string, token: string, leaseSeconds: number): Promise<boolean> {
  const result = await db
    .updateTable("imports")
    .set({ lease_until: sql<Date>`now() + make_interval(secs => ${leaseSeconds})` })
    .where("id", "=", importId)
    .where("lease_owner", "=", token)
    .where("status", "in", ["queued", "running"])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records how far a job is (from outside its transaction). */
export async function recordProgress(
  db: Kysely<Database>,
  importId: string,
  token: string,
  done: number,
  total: number | null,
): Promise<void> {
  await db
    .updateTable("imports")
    .set({ progress_done: done, progress_total: total })
    .where("id", "=", importId)
    .where("lease_owner", "=", token)
    .execute();
}

export interface ImportOutcome {
  status: "succeeded" | "failed";
  counts: Record<string, { created: number; updated: number; skipped: number }> | null;
  warnings: Array<{ path: string; message: string }>;
  warningCount: number;
  error: { code: string; field: string | null; message: string } | null;
  progress: { done: number; total: number | null };
}

/**
 * Ends a job this runner holds (in `trx`: the writes' own transaction for a succeeded import,
 * so the end commits with them) and deletes its file; returns the row after, or undefined when
 * the lease was lost (the caller rolls back).
 */
export async function finishImport(
  trx: Transaction<Database> | Kysely<Database>,
  importId: string,
  token: string | null,
  outcome: ImportOutcome,
): Promise<ImportRow | undefined> {
  let query = trx
    .updateTable("imports")
    .set({
      status: outcome.status,
      counts: outcome.counts === null ? null : json(outcome.counts),
      warnings: json(outcome.warnings.slice(0, MAX_KEPT_WARNINGS)),
      warning_count: outcome.warningCount,
      error: outcome.error === null ? null : json(outcome.error),
      progress_done: outcome.progress.done,
      progress_total: outcome.progress.total,
      finished_at: sql<Date>`now()`,
      lease_owner: null,
      lease_until: null,
    })
    .where("id", "=", importId)
    .where("status", "in", ["queued", "running"]);
  query = token === null ? query.where("lease_owner", "is", null) : query.where("lease_owner", "=", token);
  const row = await query.returning(columns).executeTakeFirst();
  if (row) await trx.deleteFrom("import_files").where("import_id", "=", importId).execute();
  return row;
}
