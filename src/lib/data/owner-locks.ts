/**
 * Serialises the owner writes of one project that check a uniqueness rule the schema does not
 * hold as a constraint (tag names case-insensitively, release slugs, board slugs): a
 * transaction-scoped advisory lock per (rule, project), so two concurrent POSTs of the same name
 * cannot both pass the check. Released at commit or rollback; other projects never wait.
 */
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";

export type OwnerLockScope = "tags" | "releases" | "boards";

const SCOPE_KEYS: Record<OwnerLockScope, number> = { tags: 0x7461_6701, releases: 0x7265_6c01, boards: 0x626f_6101 };

/** Takes the (scope, project) lock for the rest of the transaction `trx` (a kysely Transaction). */
export async function lockProjectScope(trx: Db, scope: OwnerLockScope, projectId: number): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${SCOPE_KEYS[scope]}::int, ${projectId}::int)`.execute(trx);
}
