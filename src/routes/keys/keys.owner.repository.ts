/**
 * Project key management (contract, "Authentication" 1-2; owner-api-v3.md Rule 7), used by the
 * admin CLI and by the owner routes GET /keys and POST /keys/regenerate: keys are shown once in
 * plaintext and stored only as their SHA-256 digest with a 4-character hint; regenerating a kind
 * invalidates every earlier key of that kind in the same transaction.
 */
import type { Kysely } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { Database } from "../../../db/schema.ts";
import { notifyCacheInvalidation } from "../../lib/data/app-caches.ts";
import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import { generateSecret, hashSecret, keyHint } from "../../lib/rules/secrets.ts";

export type KeyKind = "secret" | "embed";

/** A stored key as the owner API lists it: `hint` is null for keys made without one. */
export interface KeyRow {
  kind: KeyKind;
  hint: string | null;
  created_at: Date;
}

async function projectId(db: Kysely<Database>, slug: string): Promise<number> {
  const row = await db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirst();
  if (!row) throw new Error(`no project with slug "${slug}"`);
  return row.id;
}

/** Stores a new random key of `kind` for project `projectId`; returns it in plaintext with its row. */
async function insertKey(db: Db, projectId: number, kind: KeyKind): Promise<KeyRow & { key: string }> {
  const key = generateSecret(kind);
  const row = await db
    .insertInto("api_keys")
    .values({ project_id: projectId, kind, key_hash: hashSecret(key), hint: keyHint(key) })
    .returning(["kind", "hint", "created_at"])
    .executeTakeFirstOrThrow();
  return { ...row, key };
}

/**
 * Creates a key of `kind` for project `slug` next to the existing ones and returns its plaintext
 * (the only time it is visible). Throws an Error when the project does not exist.
 */
export async function createKey(db: Kysely<Database>, slug: string, kind: KeyKind): Promise<string> {
  const id = await projectId(db, slug);
  // The write lock first: a replace of the project running meanwhile would otherwise deadlock.
  return withProjectWriteLock(db, id, async (trx) => (await insertKey(trx, id, kind)).key);
}

/**
 * Replaces every key of `kind` of project `projectId` by one new key and returns it (plaintext,
 * hint, created_at). Run it inside the caller's transaction (`db` a trx): the old keys stop
 * matching when it commits. Callers must then clear the project caches (notifyCacheInvalidation;
 * the owner routes' middleware does it before the answer is sent).
 */
export async function replaceKeys(db: Db, projectId: number, kind: KeyKind): Promise<KeyRow & { key: string }> {
  await db.deleteFrom("api_keys").where("project_id", "=", projectId).where("kind", "=", kind).execute();
  return insertKey(db, projectId, kind);
}

/** The project's keys, secret before embed, oldest first within a kind (what GET /keys lists). */
export async function listKeys(db: Db, projectId: number): Promise<KeyRow[]> {
  return db
    .selectFrom("api_keys")
    .select(["kind", "hint", "created_at"])
    .where("project_id", "=", projectId)
    .orderBy("kind", "desc")
    .orderBy("created_at", "asc")
    .orderBy("id", "asc")
    .execute();
}

/**
 * Replaces every key of `kind` of project `slug` by one new key, atomically, and returns its
 * plaintext; old keys then answer invalid_key. Throws an Error when the project does not exist.
 */
export async function regenerateKey(db: Kysely<Database>, slug: string, kind: KeyKind): Promise<string> {
  const id = await projectId(db, slug);
  // The write lock first: a replace of the project running meanwhile would otherwise deadlock
  // with this transaction (both lock api_keys rows and the project row, in opposite orders).
  const key = await withProjectWriteLock(db, id, async (trx) => (await replaceKeys(trx, id, kind)).key);
  // Servers keep found keys in their project cache; the old key must stop working now, not in seconds.
  await notifyCacheInvalidation(db);
  return key;
}
