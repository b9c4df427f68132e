/** Every migration, in order. Kysely's Migrator reads them from here (no filesystem scan). */
import type { Migration } from "kysely";
import * as initialSchema from "./2026-11-22T19-00-00-initial-schema.ts";

export const migrations: Record<string, Migration> = {
  "2026-11-22T19-00-00-initial-schema": initialSchema,
};
