/**
 * Import of a whole project from a snapshot document (spec/project-snapshot.md), and the public
 * entry of the importer. Two phases: validation (snapshot-validate.ts: the zod shape, then every
 * rule that spans objects, in snapshot-references.ts and snapshot-rules.ts; all faults are
 * collected and reported together with their JSON paths, so an author fixes a file in one pass)
 * and writing (one transaction: the checks only the database can answer, here, then
 * snapshot-write.ts with multi-row inserts in chunks and the counters computed in SQL at the end,
 * snapshot-counters.ts).
 */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.ts";
import { notifyCacheInvalidation } from "../lib/project-cache.ts";
import { hashSecret } from "../lib/secrets.ts";
import type { IdMap, SnapshotDocument } from "./snapshot.schema.ts";
import { chunks, type Trx } from "./snapshot-chunks.ts";
import { type SnapshotIssue, SnapshotValidationError, validateSnapshot } from "./snapshot-validate.ts";
import { writeProject } from "./snapshot-write.ts";

// The importer's public surface stays in this module, so no caller depends on the split.
export { checkReferences } from "./snapshot-references.ts";
export { formatPath, type SnapshotIssue, SnapshotValidationError, slugify, validateSnapshot } from "./snapshot-validate.ts";

/** Options of importSnapshot. */
export interface ImportOptions {
  /** Delete an existing project with the same slug first (same transaction); default false. */
  replace?: boolean;
}

/**
 * Imports a whole project (spec/project-snapshot.md). `input` is the parsed JSON document.
 * Validates everything first, then writes in one transaction: with `replace`, an existing project
 * of that slug is deleted inside it (rows cascade). Stored counters (vote_count, weighted_score,
 * trending_score, comment_count, like_count, voters.vote_count, the project's voter count) are
 * computed in SQL from the imported rows. Returns the id map of the spec's "Id map" section.
 * Throws SnapshotValidationError (nothing written) for a bad file, an existing slug without
 * `replace`, or a key or anonymous token that another project already holds.
 */
export async function importSnapshot(
  db: Kysely<Database>,
  input: unknown,
  options: ImportOptions = {},
): Promise<IdMap> {
  const doc = validateSnapshot(input);
  const replace = options.replace === true;
  const ids = await db.transaction().execute(async (trx) => {
    const replaced = await checkAgainstDatabase(trx, doc, replace);
    // Every table cascades from projects (the FK columns are indexed: hot-path-indexes migration).
    if (replaced !== undefined) await trx.deleteFrom("projects").where("id", "=", replaced).execute();
    return writeProject(trx, doc, new Date().toISOString());
  });
  // Servers cache keys, settings and board structure for a few seconds; a replaced project must
  // not be served from the old rows.
  await notifyCacheInvalidation(db);
  return ids;
}

/**
 * Faults only the database can reveal: an existing slug, keys or tokens of other projects.
 * Returns the id of the project that `replace` will delete, if any.
 */
async function checkAgainstDatabase(trx: Trx, doc: SnapshotDocument, replace: boolean): Promise<number | undefined> {
  const issues: SnapshotIssue[] = [];
  const slug = doc.project.slug;
  const existing = await trx.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirst();
  if (existing && !replace) {
    issues.push({ path: "project.slug", message: `project "${slug}" already exists; import with --replace to overwrite it` });
  }
  // Rows of the project being replaced are deleted before the inserts, so they do not collide.
  const ownId = existing?.id ?? -1;

  const keyHashes = new Map(doc.keys.map((key, i) => [hashSecret(key.key), i]));
  const takenKeys = await takenElsewhere(keyHashes, async (chunk) => {
    const rows = await trx.selectFrom("api_keys").select("key_hash")
      .where("key_hash", "in", chunk).where("project_id", "<>", ownId).execute();
    return rows.map((row) => row.key_hash);
  });
  for (const i of takenKeys) issues.push({ path: `keys[${i}].key`, message: "already in use by another project" });

  const tokenHashes = new Map<string, number>();
  doc.voters.forEach((voter, i) => {
    if (voter.anon_token !== null) tokenHashes.set(hashSecret(voter.anon_token), i);
  });
  const takenTokens = await takenElsewhere(tokenHashes, async (chunk) => {
    const rows = await trx.selectFrom("voters").select("anon_token_hash")
      .where("anon_token_hash", "in", chunk).where("project_id", "<>", ownId).execute();
    return rows.map((row) => row.anon_token_hash!);
  });
  for (const i of takenTokens) {
    issues.push({ path: `voters[${i}].anon_token`, message: "already the token of a voter in another project" });
  }
  if (issues.length > 0) throw new SnapshotValidationError(issues);
  return existing?.id;
}

/**
 * Positions (the values of `hashes`: hash -> index in its list) of the hashes that `taken`
 * reports as held by another project, asking 10,000 hashes per query, in the order answered.
 */
async function takenElsewhere(
  hashes: Map<string, number>,
  taken: (chunk: string[]) => Promise<string[]>,
): Promise<number[]> {
  const positions: number[] = [];
  for (const chunk of chunks([...hashes.keys()], 10_000)) {
    for (const hash of await taken(chunk)) positions.push(hashes.get(hash)!);
  }
  return positions;
}
