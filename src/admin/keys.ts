/**
 * Project key management for the admin CLI (contract, "Authentication" 1-2): keys are shown once
 * in plaintext and stored only as their SHA-256 digest; regenerating a kind invalidates every
 * earlier key of that kind in the same transaction.
 */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.ts";
import { notifyCacheInvalidation } from "../lib/project-cache.ts";
import { generateSecret, hashSecret } from "../lib/secrets.ts";

export type KeyKind = "secret" | "embed";

async function projectId(db: Kysely<Database>, slug: string): Promise<number> {
  const row = await db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirst();
  if (!row) throw new Error(`no project with slug "${slug}"`);
  return row.id;
}

/**
 * Creates a key of `kind` for project `slug` next to the existing ones and returns its plaintext
 * (the only time it is visible). Throws an Error when the project does not exist.
 */
export async function createKey(db: Kysely<Database>, slug: string, kind: KeyKind): Promise<string> {
  const id = await projectId(db, slug);
  const key = generateSecret(kind);
  await db.insertInto("api_keys").values({ project_id: id, kind, key_hash: hashSecret(key) }).execute();
  return key;
}

/**
 * Replaces every key of `kind` of project `slug` by one new key, atomically, and returns its
 * plaintext; old keys then answer invalid_key. Throws an Error when the project does not exist.
 */
export async function regenerateKey(db: Kysely<Database>, slug: string, kind: KeyKind): Promise<string> {
  const key = await db.transaction().execute(async (trx) => {
    const id = await projectId(trx, slug);
    await trx.deleteFrom("api_keys").where("project_id", "=", id).where("kind", "=", kind).execute();
    const fresh = generateSecret(kind);
    await trx.insertInto("api_keys").values({ project_id: id, kind, key_hash: hashSecret(fresh) }).execute();
    return fresh;
  });
  // Servers keep found keys in their project cache; the old key must stop working now, not in seconds.
  await notifyCacheInvalidation(db);
  return key;
}
