/**
 * Project key check (contract, "Authentication" 1-4): X-API-Key is looked up by its SHA-256
 * digest, the owner's plan must be PRO, an embed key sent with an Origin header must come from
 * the allowlist, and the key must belong to the project in the path. Sets `project` and `apiKey`.
 * Errors: missing_key, invalid_key (401); not_allowed, origin_not_allowed, key_wrong_project
 * (403); not_found (404) for an unknown or private project. The key lookup goes through the
 * in-process project cache (src/lib/project-cache.ts).
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../lib/context.ts";
import { ApiError } from "../lib/errors.ts";
import { findKeyWithProjectCached, findProjectBySlug } from "../lib/projects.repository.ts";
import { hashSecret } from "../lib/secrets.ts";

const PROJECT_PATH = /^\/api\/v3\/projects\/([^/]+)/;
/** What a project slug can be (snapshot spec); anything else names no project. */
const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The slug in the path, decoded; "" when it cannot be decoded (it then matches no project). */
function slugOf(path: string): string | undefined {
  const raw = PROJECT_PATH.exec(path)?.[1];
  if (raw === undefined) return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return "";
  }
}

export function apiKeyMiddleware(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { db } = c.get("deps");
    const presented = c.req.header("X-API-Key");
    if (presented === undefined || presented.trim() === "") {
      throw new ApiError("missing_key", "send the project key in the X-API-Key header");
    }
    const found = await findKeyWithProjectCached(c.get("deps"), hashSecret(presented));
    if (!found) throw new ApiError("invalid_key", "the API key does not exist or was regenerated");
    const { key, project } = found;
    if (project.plan !== "pro") {
      throw new ApiError("not_allowed", "the API needs the PRO plan");
    }
    const origin = c.req.header("Origin");
    if (key.kind === "embed" && origin !== undefined && !project.allowed_origins.includes(origin)) {
      throw new ApiError("origin_not_allowed", "this origin is not on the project's allowlist for the embed key");
    }
    const slugInPath = slugOf(c.req.path);
    if (slugInPath !== undefined && slugInPath !== project.slug) {
      // A malformed slug (bad escape, NUL, ...) is never looked up: no project can have it.
      const other = SLUG.test(slugInPath) ? await findProjectBySlug(db, slugInPath) : undefined;
      if (!other || other.is_private) throw new ApiError("not_found", "project not found");
      throw new ApiError("key_wrong_project", "the API key belongs to another project");
    }
    if (project.is_private) throw new ApiError("not_found", "project not found");
    c.set("apiKey", key);
    c.set("project", project);
    await next();
  };
}
