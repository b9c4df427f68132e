/**
 * Imports (imports-v3.md): one `imports` row per import job and its uploaded export apart.
 *
 * - imports: the job and its ImportObject. `id` is the public id (`imp_` + 16 random bytes in
 *   base64url). A runner claims a job by setting `lease_owner` and `lease_until` (renewed while
 *   it runs) and adding one to `attempts`; a job whose lease ran out is claimed again, at most
 *   three attempts in all. `progress_done` / `progress_total` are written from outside the
 *   job's transaction while it runs; `counts`, `warnings` (the first 1,000) and
 *   `warning_count` when it ends; `error` is the Error object of a failed job.
 * - import_files: the export's bytes, kept apart so that lists of imports never read them and
 *   deleted when the job ends (any instance may claim the job, so the file lives in the
 *   database). A Canny API import has no row until the receiving process has fetched the export.
 *
 * Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE imports (
    id text PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    source text NOT NULL,
    dry_run boolean NOT NULL,
    status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    options jsonb NOT NULL,
    progress_done integer NOT NULL DEFAULT 0,
    progress_total integer,
    counts jsonb,
    warnings jsonb NOT NULL DEFAULT '[]'::jsonb,
    warning_count integer NOT NULL DEFAULT 0,
    error jsonb,
    attempts integer NOT NULL DEFAULT 0,
    lease_owner text,
    lease_until timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    started_at timestamptz,
    finished_at timestamptz,
    seq bigserial NOT NULL
  )`.execute(db);
  // Lists (newest first) and the claim (the oldest unfinished import of each project).
  await sql`CREATE INDEX imports_project_seq_idx ON imports (project_id, seq DESC)`.execute(db);
  await sql`CREATE INDEX imports_unfinished_idx ON imports (project_id, seq) WHERE status IN ('queued', 'running')`.execute(db);
  await sql`CREATE TABLE import_files (
    import_id text PRIMARY KEY REFERENCES imports(id) ON DELETE CASCADE,
    file_name text,
    bytes bytea NOT NULL
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE import_files`.execute(db);
  await sql`DROP TABLE imports`.execute(db);
}
