/**
 * Project, key and voter resolution (docs/architecture.md, "Per-request services"): the one
 * service the
 * keyed middleware (api-key, cors, voter) and the identity route use to learn which project a
 * request addresses and who makes it. Lookups go through the app's cache namespaces
 * (src/lib/data/app-caches.ts); nothing negative is kept, so a key or token stored a moment ago works
 * at once. Queries: src/lib/data/resolution.repository.ts.
 */
import type { AppDeps, ProjectContext, VoterContext } from "../http/context.ts";
import { ApiError } from "../http/errors.ts";
import { generateSecret, hashSecret } from "../rules/secrets.ts";
import { verifySsoToken } from "../rules/sso.ts";
import {
  createAnonymousVoter,
  type FoundKey,
  findAllAllowedOrigins,
  findAllowedOrigins,
  findAnonymousVoter,
  findKeyWithProject,
  findProjectBySlug,
  findSsoVoter,
  upsertSsoVoter,
} from "./resolution.repository.ts";

type ResolutionDeps = Pick<AppDeps, "db" | "caches">;

/** What a project slug can be (snapshot spec); anything else names no project. */
const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** Whether `slug` can name a project at all (a malformed one is never looked up). */
export function isProjectSlug(slug: string): boolean {
  return SLUG.test(slug);
}

/** Freezes a found key in place: every request of the cache's lifetime shares the object. */
function frozen(found: FoundKey): FoundKey {
  const { project } = found;
  for (const part of [project.settings, project.theme, project.theme.light, project.theme.dark, project.allowed_origins])
    Object.freeze(part);
  return Object.freeze({ key: Object.freeze(found.key), project: Object.freeze(project) });
}

/**
 * The key with this SHA-256 digest and its project (frozen), through the cache; undefined for
 * an unknown key (looked up again next time). `fresh` drops a cached value first: for a refusal
 * that an owner's change a moment ago may have lifted.
 */
export async function resolveKey(deps: ResolutionDeps, keyHash: string, options: { fresh?: boolean } = {}): Promise<FoundKey | undefined> {
  if (options.fresh) deps.caches.keys.delete([keyHash]);
  return deps.caches.keys.remember([keyHash], async () => {
    const found = await findKeyWithProject(deps.db, keyHash);
    return found && frozen(found);
  });
}

/** The project with this slug (uncached: only a refused key's diagnosis asks), or undefined. */
export async function resolveProjectBySlug(deps: ResolutionDeps, slug: string): Promise<ProjectContext | undefined> {
  return isProjectSlug(slug) ? findProjectBySlug(deps.db, slug) : undefined;
}

/**
 * The allowlist of the public project with this slug, through the cache; undefined for an
 * unknown, private or malformed slug (alike to a caller without a key).
 */
export async function resolveAllowedOrigins(deps: ResolutionDeps, slug: string): Promise<readonly string[] | undefined> {
  if (!isProjectSlug(slug)) return undefined;
  return deps.caches.allowedOrigins.remember([slug], async () => {
    const origins = await findAllowedOrigins(deps.db, slug);
    return origins && Object.freeze([...origins]);
  });
}

/**
 * Every origin on the allowlist of some public project, through the cache: one query per
 * PROJECT_CACHE_SECONDS whatever origins are asked about (a keyless preflight must not cost a
 * table scan per request).
 */
export async function resolveAllAllowedOrigins(deps: ResolutionDeps): Promise<ReadonlySet<string>> {
  return deps.caches.allAllowedOrigins.remember([], () => findAllAllowedOrigins(deps.db));
}

/** The identity tokens a request presents (contract, "Authentication" 5-8); "" counts as absent. */
export interface PresentedIdentity {
  ssoToken: string | undefined;
  anonToken: string | undefined;
}

function present(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/**
 * The voter named by the presented tokens: undefined when none was sent, null for a valid SSO
 * token whose user has no voter yet (only when `createSso` is false: reads). An SSO token
 * outranks an anonymous one. Anonymous voters come through the cache (an owner's ban replaces
 * the project's lookups revision, which clears it on every instance). Throws 401
 * identity_invalid for a malformed, expired or foreign token.
 */
export async function resolveVoter(
  deps: ResolutionDeps,
  project: ProjectContext,
  presented: PresentedIdentity,
  options: { createSso: boolean },
): Promise<VoterContext | null | undefined> {
  const ssoToken = present(presented.ssoToken);
  if (ssoToken !== undefined) {
    const claims = await verifySsoToken(ssoToken, project.sso_secret);
    if (options.createSso) {
      const { created: _created, ...voter } = await upsertSsoVoter(deps.db, project.id, claims, false);
      return voter;
    }
    return (await findSsoVoter(deps.db, project.id, claims.sub)) ?? null;
  }
  const anonToken = present(presented.anonToken);
  if (anonToken !== undefined) {
    const digest = hashSecret(anonToken);
    const voter = await deps.caches.anonymousVoters.remember([project.id, digest], () => findAnonymousVoter(deps.db, project.id, digest));
    if (!voter) throw new ApiError("identity_invalid", "the anonymous token is unknown to this project");
    return voter;
  }
  return undefined;
}

/** What the identity route answers with (contract, "Taking part" rule 1). */
export interface ExchangedIdentity {
  voter: VoterContext;
  /** True when this exchange created the voter (201). */
  created: boolean;
  /** The anonymous token to hand back: the presented one, a new one, or null for SSO. */
  anonToken: string | null;
  /** True when no read shows a difference (no new content revision is needed). */
  contentUnchanged: boolean;
}

/**
 * The identity route's exchange: an SSO token maps to its voter (created on first sight, name and
 * email refreshed); an anonymous token to its voter; no token mints a new anonymous voter whose
 * token exists only in this answer (the database keeps its digest). Throws identity_invalid.
 */
export async function exchangeIdentity(
  deps: ResolutionDeps,
  project: ProjectContext,
  presented: PresentedIdentity,
): Promise<ExchangedIdentity> {
  const ssoToken = present(presented.ssoToken);
  if (ssoToken !== undefined) {
    const claims = await verifySsoToken(ssoToken, project.sso_secret);
    const { created, ...voter } = await upsertSsoVoter(deps.db, project.id, claims, true);
    // A refreshed name may rename a comment author: reads must be rebuilt.
    return { voter, created, anonToken: null, contentUnchanged: false };
  }
  const anonToken = present(presented.anonToken);
  if (anonToken !== undefined) {
    const voter = await resolveVoter(deps, project, { ssoToken: undefined, anonToken }, { createSso: false });
    return { voter: voter!, created: false, anonToken, contentUnchanged: true };
  }
  const minted = generateSecret("anon");
  const voter = await createAnonymousVoter(deps.db, project.id, hashSecret(minted));
  // A new anonymous voter shows in no read until it votes or comments (each a write of its own).
  return { voter, created: true, anonToken: minted, contentUnchanged: true };
}
