/** Voter queries: resolve an identity, mint an anonymous voter, exchange an SSO user. */
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { VoterContext } from "../../lib/context.ts";
import { generateHandle } from "../../lib/handles.ts";
import { withProjectWriteLock } from "../../lib/project-write-lock.ts";
import { generateVoterId } from "../../lib/secrets.ts";
import type { SsoClaims } from "../../lib/sso.ts";

/** A voter created through the API carries no role and no billing link (the owner adds those). */
const withoutBilling = {
  role: null,
  company: null,
  tier_id: null,
  mrr_override_cents: null,
  stripe_customer_id: null,
  paddle_customer_id: null,
  subscription_id: null,
  subscription_status: null,
  churn_source: null,
} as const;

const voterColumns = ["id", "public_id as publicId", "kind", "display_name as displayName", "banned"] as const;

export async function findAnonymousVoter(db: Db, projectId: number, tokenHash: string): Promise<VoterContext | undefined> {
  return db
    .selectFrom("voters")
    .select([...voterColumns])
    .where("anon_token_hash", "=", tokenHash)
    .where("project_id", "=", projectId)
    .executeTakeFirst();
}

export async function findSsoVoter(db: Db, projectId: number, ssoId: string): Promise<VoterContext | undefined> {
  return db
    .selectFrom("voters")
    .select([...voterColumns])
    .where("project_id", "=", projectId)
    .where("sso_id", "=", ssoId)
    .executeTakeFirst();
}

/**
 * The voter an SSO user maps to, created on first sight (race-safe through the unique
 * (project_id, sso_id) index). `refreshProfile` also stores the token's name and email, as the
 * identity route does on every exchange. Returns the voter and whether it was created. Like every
 * write, holds the project's write lock (src/lib/project-write-lock.ts).
 */
export async function upsertSsoVoter(
  db: Db,
  projectId: number,
  claims: SsoClaims,
  refreshProfile: boolean,
): Promise<VoterContext & { created: boolean }> {
  const row = await withProjectWriteLock(db, projectId, (trx) =>
    trx
      .insertInto("voters")
      .values({
        public_id: generateVoterId(),
        project_id: projectId,
        kind: "sso",
        sso_id: claims.sub,
        display_name: claims.name ?? generateHandle(),
        email: claims.email,
        anon_token_hash: null,
        ...withoutBilling,
      })
      .onConflict((oc) =>
        oc
          .columns(["project_id", "sso_id"])
          .where("sso_id", "is not", null)
          .doUpdateSet(
            refreshProfile
              ? {
                  display_name: sql`coalesce(${claims.name}, voters.display_name)`,
                  email: sql`coalesce(${claims.email}, voters.email)`,
                  updated_at: sql`now()`,
                }
              : { updated_at: sql`voters.updated_at` },
          ),
      )
      .returning([...voterColumns, sql<boolean>`(xmax = 0)`.as("created")])
      .executeTakeFirstOrThrow(),
  );
  return row;
}

/** Mints an anonymous voter answering to the token with this digest. */
export async function createAnonymousVoter(db: Db, projectId: number, tokenHash: string): Promise<VoterContext> {
  return withProjectWriteLock(db, projectId, (trx) =>
    trx
      .insertInto("voters")
      .values({
        public_id: generateVoterId(),
        project_id: projectId,
        kind: "anonymous",
        anon_token_hash: tokenHash,
        sso_id: null,
        display_name: generateHandle(),
        email: null,
        ...withoutBilling,
      })
      .returning([...voterColumns])
      .executeTakeFirstOrThrow(),
  );
}

/** Ids of every feature the voter has a vote on, ascending. */
export async function listVotedFeatureIds(db: Db, voterId: number): Promise<number[]> {
  const rows = await db.selectFrom("votes").select("feature_id").where("voter_id", "=", voterId).orderBy("feature_id").execute();
  return rows.map((row) => row.feature_id);
}
