/**
 * Project key check (contract, "Authentication" 1-4): X-API-Key is looked up by its SHA-256
 * digest, the owner's plan must be PRO, an embed key sent with an Origin header must come from
 * the allowlist, and the key must belong to the project in the path. Sets `project` and `apiKey`.
 * Errors: missing_key, invalid_key (401); not_allowed, origin_not_allowed, key_wrong_project
 * (403); not_found (404) for an unknown or private project.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../lib/context.ts";
import { ApiError } from "../lib/errors.ts";
import { findKeyWithProject, findProjectBySlug } from "../lib/projects.repository.ts";
import { hashSecret } from "../lib/secrets.ts";

const PROJECT_PATH = /^\/api\/v3\/projects\/([^/]+)/;

export function apiKeyMiddleware(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { db } = c.var.deps;
    const presented = c.req.header("X-API-Key");
    if (presented === undefined || presented.trim() === "") {
      throw new ApiError("missing_key", "send the project key in the X-API-Key header");
    }
    const found = await findKeyWithProject(db, hashSecret(presented));
    if (!found) throw new ApiError("invalid_key", "the API key does not exist or was regenerated");
    const { key, project } = found;
    if (project.plan !== "pro") {
      throw new ApiError("not_allowed", "the API needs the PRO plan");
    }
    const origin = c.req.header("Origin");
    if (key.kind === "embed" && origin !== undefined && !project.allowed_origins.includes(origin)) {
      throw new ApiError("origin_not_allowed", "this origin is not on the project's allowlist for the embed key");
    }
    const slugInPath = PROJECT_PATH.exec(c.req.path)?.[1];
    if (slugInPath !== undefined && decodeURIComponent(slugInPath) !== project.slug) {
      const other = await findProjectBySlug(db, decodeURIComponent(slugInPath));
      if (!other || other.is_private) throw new ApiError("not_found", "project not found");
      throw new ApiError("key_wrong_project", "the API key belongs to another project");
    }
    if (project.is_private) throw new ApiError("not_found", "project not found");
    c.set("apiKey", key);
    c.set("project", project);
    await next();
  };
}
