/** Identity route queries beyond resolution (src/lib/data/resolution.repository.ts holds those). */
import type { Db } from "../../../db/connect.ts";

/** Ids of every feature the voter has a vote on, ascending. */
export async function listVotedFeatureIds(db: Db, voterId: number): Promise<number[]> {
  const rows = await db.selectFrom("votes").select("feature_id").where("voter_id", "=", voterId).orderBy("feature_id").execute();
  return rows.map((row) => row.feature_id);
}
