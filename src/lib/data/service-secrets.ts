/**
 * Secrets every instance shares through the database (table service_secrets, made by migration
 * 2026-11-25T02-10-00-emails from Postgres's strong random source): all instances of one
 * database sign and verify with the same secret, with nothing to configure or keep in step.
 * Read once per database handle and kept in process (they never change).
 */
import type { Db } from "../../../db/connect.ts";

const cache = new WeakMap<Db, Map<string, Promise<string>>>();

/**
 * The secret `name` (`unsubscribe`) of database `db`. Throws when the row is missing (the
 * migration did not run) or the database cannot be read; a failed read is not cached.
 */
export function serviceSecret(db: Db, name: "unsubscribe"): Promise<string> {
  let secrets = cache.get(db);
  if (!secrets) {
    secrets = new Map();
    cache.set(db, secrets);
  }
  const known = secrets.get(name);
  if (known) return known;
  const loading = db
    .selectFrom("service_secrets")
    .select("secret")
    .where("name", "=", name)
    .executeTakeFirstOrThrow()
    .then((row) => row.secret);
  secrets.set(name, loading);
  loading.catch(() => secrets.delete(name));
  return loading;
}
