/**
 * Queries that resolve what a request addresses and who makes it: the key and its project, a
 * project by slug, allowlists, and voters (find an anonymous or SSO voter, exchange an SSO user,
 * mint an anonymous voter). The cached service over them is src/lib/data/resolution.ts.
 */
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { ApiKeyContext, ProjectContext, VoterContext } from "../http/context.ts";
import { generateHandle } from "../rules/handles.ts";
import { generateVoterId } from "../rules/secrets.ts";
import type { SsoClaims } from "../rules/sso.ts";
import { withProjectWriteLock } from "./project-write-lock.ts";

/** A key and the project it opens. */
export interface FoundKey {
  key: ApiKeyContext;
  project: ProjectContext;
}

const projectColumns = [
  "projects.id",
  "projects.slug",
  "projects.name",
  "projects.description",
  "projects.logo_url",
  "projects.banner_url",
  "projects.currency_symbol",
  "projects.show_branding",
  "projects.is_private",
  "projects.plan",
  "projects.sso_secret",
  "projects.allowed_origins",
  "projects.settings",
  "projects.theme",
] as const;

/** The key with this SHA-256 digest and its project, in one query; undefined if none. */
export async function findKeyWithProject(db: Db, keyHash: string): Promise<FoundKey | undefined> {
  const row = await db
    .selectFrom("api_keys")
    .innerJoin("projects", "projects.id", "api_keys.project_id")
    .select([...projectColumns, "api_keys.id as key_id", "api_keys.kind as key_kind"])
    .where("api_keys.key_hash", "=", keyHash)
    .executeTakeFirst();
  if (!row) return undefined;
  const { key_id, key_kind, ...project } = row;
  return { key: { id: key_id, kind: key_kind, projectId: project.id }, project };
}

export async function findProjectBySlug(db: Db, slug: string): Promise<ProjectContext | undefined> {
  return db
    .selectFrom("projects")
    .select([...projectColumns])
    .where("projects.slug", "=", slug)
    .executeTakeFirst();
}

/** The allowlist of the public project with this slug; undefined for an unknown or private one. */
export async function findAllowedOrigins(db: Db, slug: string): Promise<readonly string[] | undefined> {
  const row = await db
    .selectFrom("projects")
    .select(["projects.allowed_origins", "projects.is_private"])
    .where("projects.slug", "=", slug)
    .executeTakeFirst();
  return row && !row.is_private ? row.allowed_origins : undefined;
}

/** Every origin on the allowlist of some public project. */
export async function findAllAllowedOrigins(db: Db): Promise<Set<string>> {
  const rows = await db
    .selectFrom("projects")
    .select("projects.allowed_origins")
    .where("projects.is_private", "=", false)
    .where(sql<boolean>`cardinality(projects.allowed_origins) > 0`)
    .execute();
  return new Set(rows.flatMap((row) => row.allowed_origins));
}

/** A voter created through the API (or an import) carries no role and no billing link (the owner adds those). */
export const withoutBilling = {
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
 * Claiming (imports-v3.md, "Mapping", Voters): a token whose `email` equals, case-insensitively,
 * the email of a voter an import made (a voter row of import_sources) that has no sso_id yet
 * takes that voter: `sub` becomes its sso_id, so a migrated voter keeps its votes on first
 * sign-in. Not when a voter with this `sub` exists already. The lowest such voter id first.
 *
 * Race-safe: the UPDATE's own `sso_id IS NULL` is re-checked on the row once a concurrent
 * claimer's lock is released, so of two tokens claiming one voter exactly one wins (the other
 * updates nothing and goes on to the ordinary insert); two claims with the same `sub` end on the
 * one voter through the unique (project_id, sso_id) index. Runs in the caller's transaction.
 */
async function claimImportedVoter(trx: Db, projectId: number, claims: SsoClaims): Promise<void> {
  if (!claims.email) return;
  await sql`UPDATE voters SET sso_id = ${claims.sub}, updated_at = now()
    WHERE id = (
      SELECT v.id FROM voters v
      WHERE v.project_id = ${projectId} AND v.sso_id IS NULL AND v.email IS NOT NULL AND lower(v.email) = lower(${claims.email})
        AND EXISTS (SELECT 1 FROM import_sources s WHERE s.project_id = ${projectId} AND s.kind = 'voter' AND s.target_id = v.id)
        AND NOT EXISTS (SELECT 1 FROM voters o WHERE o.project_id = ${projectId} AND o.sso_id = ${claims.sub})
      ORDER BY v.id LIMIT 1)
    AND sso_id IS NULL`.execute(trx);
}

/**
 * The voter an SSO user maps to, created on first sight (race-safe through the unique
 * (project_id, sso_id) index), or an imported voter the token's email claims (claimImportedVoter).
 * `refreshProfile` also stores the token's name and email, as the identity route does on every
 * exchange. Returns the voter and whether it was created. Like every write, holds the project's
 * write lock (src/lib/data/project-write-lock.ts).
 */
export async function upsertSsoVoter(
  db: Db,
  projectId: number,
  claims: SsoClaims,
  refreshProfile: boolean,
): Promise<VoterContext & { created: boolean }> {
  const row = await withProjectWriteLock(db, projectId, async (trx) => {
    await claimImportedVoter(trx, projectId, claims);
    return trx
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
      .executeTakeFirstOrThrow();
  });
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
