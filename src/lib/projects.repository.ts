/** Queries that resolve the project and key a request addresses. */
import type { Db } from "../../db/connect.ts";
import type { ApiKeyContext, ProjectContext } from "./context.ts";

const projectColumns = [
  "projects.id", "projects.slug", "projects.name", "projects.description", "projects.logo_url",
  "projects.banner_url", "projects.currency_symbol", "projects.show_branding", "projects.is_private",
  "projects.plan", "projects.sso_secret", "projects.allowed_origins", "projects.settings", "projects.theme",
] as const;

/** The key with this SHA-256 digest and its project, in one query; undefined if none. */
export async function findKeyWithProject(
  db: Db,
  keyHash: string,
): Promise<{ key: ApiKeyContext; project: ProjectContext } | undefined> {
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
  return db.selectFrom("projects").select([...projectColumns]).where("projects.slug", "=", slug).executeTakeFirst();
}
