/**
 * Opens the database the config names: Postgres through the `postgres` driver when
 * DATABASE_URL is set, otherwise the embedded PGlite (same SQL, same migrations).
 */
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { Kysely, Migrator } from "kysely";
import { PGliteDialect } from "kysely-pglite-dialect";
import { PostgresJSDialect } from "kysely-postgres-js";
import postgres from "postgres";
import type { Database } from "./schema.ts";
import { migrations } from "./migrations/index.ts";

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  /** "postgres" for a server, "pglite" for the embedded default. */
  kind: "postgres" | "pglite";
  close(): Promise<void>;
}

export interface DatabaseOptions {
  DATABASE_URL?: string | undefined;
  /** PGlite data directory, or "memory://" for a throwaway database. */
  PGLITE_DIR?: string;
  /** Postgres pool size; default 10. */
  poolSize?: number;
}

/** Opens (but does not migrate) the database. */
export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.DATABASE_URL) {
    const client = postgres(options.DATABASE_URL, {
      max: options.poolSize ?? 10,
      onnotice: () => {},
      connect_timeout: 10,
      idle_timeout: 60,
      // Dates are RFC 3339 in UTC on the wire; keep the session in UTC too.
      connection: { TimeZone: "UTC" },
    });
    const db = new Kysely<Database>({ dialect: new PostgresJSDialect({ postgres: client }) });
    return { db, kind: "postgres", close: () => db.destroy() };
  }
  const dir = options.PGLITE_DIR ?? "./data";
  const pglite = await PGlite.create({
    ...(dir === "memory://" ? {} : { dataDir: dir }),
    extensions: { pg_trgm },
  });
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return { db, kind: "pglite", close: () => db.destroy() };
}

/** Applies every pending migration; throws the first migration error. */
export async function migrateToLatest(db: Db): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}
