/** Queries that resolve the project and key a request addresses. */
import { sql } from "kysely";
import type { Db } from "../../db/connect.ts";
import type { ApiKeyContext, AppDeps, ProjectContext } from "./context.ts";
import { projectCache } from "./project-cache.ts";

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
export async function findKeyWithProject(db: Db, keyHash: string): Promise<{ key: ApiKeyContext; project: ProjectContext } | undefined> {
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

/**
 * findKeyWithProject through the process's project cache (project-cache.ts): a key that exists
 * is remembered with its project and settings for PROJECT_CACHE_SECONDS (cleared at once by a
 * key regeneration or import anywhere); an unknown key is looked up every time. The result is
 * frozen, as every request of those seconds shares it.
 */
export async function findKeyWithProjectCached(
  deps: Pick<AppDeps, "db" | "config">,
  keyHash: string,
): Promise<{ key: ApiKeyContext; project: ProjectContext } | undefined> {
  return projectCache(deps).remember(`key:${keyHash}`, async () => {
    const found = await findKeyWithProject(deps.db, keyHash);
    if (!found) return undefined;
    const { project } = found;
    for (const part of [project.settings, project.theme, project.theme.light, project.theme.dark, project.allowed_origins])
      Object.freeze(part);
    return Object.freeze({ key: Object.freeze(found.key), project: Object.freeze(project) });
  });
}

export async function findProjectBySlug(db: Db, slug: string): Promise<ProjectContext | undefined> {
  return db
    .selectFrom("projects")
    .select([...projectColumns])
    .where("projects.slug", "=", slug)
    .executeTakeFirst();
}

/**
 * The allowlist (`allowed_origins`) of the public project with this slug, through the project
 * cache; undefined for an unknown or private project (both look alike to a caller without a
 * key). Unknown slugs are looked up every time, as in findKeyWithProjectCached.
 */
export async function findAllowedOriginsBySlugCached(
  deps: Pick<AppDeps, "db" | "config">,
  slug: string,
): Promise<readonly string[] | undefined> {
  return projectCache(deps).remember(`origins-of:${slug}`, async () => {
    const row = await deps.db
      .selectFrom("projects")
      .select(["projects.allowed_origins", "projects.is_private"])
      .where("projects.slug", "=", slug)
      .executeTakeFirst();
    return row && !row.is_private ? Object.freeze(row.allowed_origins) : undefined;
  });
}

/**
 * Every origin on the allowlist of some public project, through the project cache: one query
 * per PROJECT_CACHE_SECONDS whatever origins are asked about (a keyless preflight must not cost
 * a table scan per request).
 */
export async function allAllowedOriginsCached(deps: Pick<AppDeps, "db" | "config">): Promise<ReadonlySet<string>> {
  return projectCache(deps).remember("origins-of-all", async () => {
    const rows = await deps.db
      .selectFrom("projects")
      .select("projects.allowed_origins")
      .where("projects.is_private", "=", false)
      .where(sql<boolean>`cardinality(projects.allowed_origins) > 0`)
      .execute();
    return new Set(rows.flatMap((row) => row.allowed_origins));
  });
}
