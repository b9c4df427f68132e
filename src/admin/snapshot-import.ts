/**
 * Import of a whole project from a snapshot document (docs/contract/project-snapshot.md), and the
 * public
 * entry of the importer. Two phases: validation (snapshot-validate.ts: the zod shape, then every
 * rule that spans objects, in snapshot-references.ts and snapshot-rules.ts; all faults are
 * collected and reported together with their JSON paths, so an author fixes a file in one pass)
 * and writing (one transaction: the checks only the database can answer, here, then
 * snapshot-write.ts with multi-row inserts in chunks and the counters computed in SQL at the end,
 * snapshot-counters.ts).
 */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.ts";
import { notifyCacheInvalidation } from "../lib/data/app-caches.ts";
import { lockProjectForReplace } from "../lib/data/project-write-lock.ts";
import type { IdMap, SnapshotDocument } from "./snapshot.schema.ts";
import { chunks, type ProgressSink, type Trx } from "./snapshot-chunks.ts";
import { anonTokenDigest, keyDigest, keyField, rowsWithIds } from "./snapshot-rules.ts";
import { type SnapshotIssue, SnapshotValidationError, validateSnapshot } from "./snapshot-validate.ts";
import { type KeptIds, writeProject } from "./snapshot-write.ts";

export type { ProgressSink } from "./snapshot-chunks.ts";
// The importer's public surface stays in this module, so no caller depends on the split.
export { checkReferences } from "./snapshot-references.ts";
export { formatPath, type SnapshotIssue, SnapshotValidationError, validateSnapshot } from "./snapshot-validate.ts";

/** Options of importSnapshot. */
export interface ImportOptions {
  /** Delete an existing project with the same slug first (same transaction); default false. */
  replace?: boolean;
  /** Told after each chunk of rows written and each step (see ProgressSink); default: nothing. */
  onProgress?: ProgressSink;
  /**
   * Accept http: webhook URLs and private IP literals, as WEBHOOK_ALLOW_PRIVATE_URLS=true lets the
   * owner route (the command line passes that setting); default false.
   */
  allowPrivateWebhookUrls?: boolean;
}

/**
 * Imports a whole project (docs/contract/project-snapshot.md). `input` is the parsed JSON document.
 * Validates everything first, then writes in one transaction, so readers see the old project or
 * the new one, never a mix. With `replace`, an existing project of that slug is deleted inside it
 * (rows cascade) after taking the project's write lock exclusively (src/lib/data/project-write-lock.ts:
 * API writes under way finish first, later ones wait for the commit); the new project keeps the
 * old one's id, and voters whose voter_id the old project had keep their internal ids, so a write
 * that waited runs against the restored rows. Ids the file gives (spec, "Restores") are kept and
 * the id sequences moved past them. Webhooks keep their ids and secrets, and merged features
 * their merge records (spec, "Webhooks, merges and engagement"). Stored counters are computed in
 * SQL from the imported rows. Returns the id map of the spec's "Id map" section. Throws
 * SnapshotValidationError (nothing written) for a bad file, an existing slug without `replace`,
 * or a key, token, id or voter_id that another project already holds.
 */
export async function importSnapshot(db: Kysely<Database>, input: unknown, options: ImportOptions = {}): Promise<IdMap> {
  const doc = validateSnapshot(input, { allowPrivateWebhookUrls: options.allowPrivateWebhookUrls === true });
  const replace = options.replace === true;
  const progress = options.onProgress ?? (() => {});
  const ids = await db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom("projects").select("id").where("slug", "=", doc.project.slug).executeTakeFirst();
    if (existing && replace) {
      progress("waiting for writes to the project", 0, 1);
      await lockProjectForReplace(trx, existing.id);
    }
    await checkAgainstDatabase(trx, doc, existing?.id, replace);
    const keep: KeptIds = {};
    if (existing && replace) {
      const voters = await trx.selectFrom("voters").select(["id", "public_id"]).where("project_id", "=", existing.id).execute();
      keep.projectId = existing.id;
      keep.voterIds = new Map(voters.map((voter) => [voter.public_id, voter.id]));
      progress("deleting the old project", 0, 1);
      // Every table cascades from projects (the FK columns are indexed: hot-path-indexes migration).
      await trx.deleteFrom("projects").where("id", "=", existing.id).execute();
    }
    return writeProject(trx, doc, new Date().toISOString(), keep, progress);
  });
  // Servers cache keys, settings, board structure and whole read answers; a replaced project
  // must not be served from the old rows (every instance clears them on this notification).
  await notifyCacheInvalidation(db);
  return ids;
}

/**
 * Faults only the database can reveal: an existing slug (without `replace`), keys, tokens, row
 * ids or voter_ids held by another project. `existingId` is the id of the project of that slug,
 * whose own rows do not count when it is being replaced (they are deleted before the inserts).
 */
async function checkAgainstDatabase(trx: Trx, doc: SnapshotDocument, existingId: number | undefined, replace: boolean) {
  const issues: SnapshotIssue[] = [];
  const slug = doc.project.slug;
  if (existingId !== undefined && !replace) {
    issues.push({ path: "project.slug", message: `project "${slug}" already exists; import with --replace to overwrite it` });
  }
  const ownId = existingId ?? -1;

  const keys = new Map(doc.keys.map((key, i) => [keyDigest(key), `keys[${i}].${keyField(key)}`]));
  for (const [, path] of await heldElsewhere(keys, (chunk) =>
    trx.selectFrom("api_keys").select("key_hash as value").where("key_hash", "in", chunk).where("project_id", "<>", ownId).execute(),
  )) {
    issues.push({ path, message: "already in use by another project" });
  }

  const tokens = new Map<string, string>();
  doc.voters.forEach((voter, i) => {
    const token = anonTokenDigest(voter);
    if (token !== null) tokens.set(token.digest, `voters[${i}].${token.field}`);
  });
  for (const [, path] of await heldElsewhere(tokens, (chunk) =>
    trx
      .selectFrom("voters")
      .select("anon_token_hash as value")
      .where("anon_token_hash", "in", chunk)
      .where("project_id", "<>", ownId)
      .execute(),
  )) {
    issues.push({ path, message: "already the token of a voter in another project" });
  }

  const voterIds = new Map<string, string>();
  doc.voters.forEach((voter, i) => {
    if (voter.voter_id !== undefined) voterIds.set(voter.voter_id, `voters[${i}].voter_id`);
  });
  for (const [value, path] of await heldElsewhere(voterIds, (chunk) =>
    trx.selectFrom("voters").select("public_id as value").where("public_id", "in", chunk).where("project_id", "<>", ownId).execute(),
  )) {
    issues.push({ path, message: `voter_id "${value}" belongs to another project` });
  }

  for (const [table, rows] of rowsWithIds(doc)) {
    const paths = new Map(rows.flatMap((row) => (row.id === undefined ? [] : [[row.id, `${row.path}.id`] as const])));
    for (const [value, path] of await heldElsewhere(paths, (chunk) =>
      trx.selectFrom(table).select("id as value").where("id", "in", chunk).where("project_id", "<>", ownId).execute(),
    )) {
      issues.push({ path, message: `id ${value} belongs to another project` });
    }
  }
  if (issues.length > 0) throw new SnapshotValidationError(issues);
}

/**
 * The values of `items` (value -> JSON path) that `held` reports as held by another project,
 * with their paths, asking 10,000 values per query, in the order answered.
 */
async function heldElsewhere<V extends string | number>(
  items: Map<V, string>,
  held: (chunk: V[]) => Promise<Array<{ value: V | null }>>,
): Promise<Array<[V, string]>> {
  const found: Array<[V, string]> = [];
  for (const chunk of chunks([...items.keys()], 10_000)) {
    for (const row of await held(chunk)) found.push([row.value!, items.get(row.value!)!]);
  }
  return found;
}
