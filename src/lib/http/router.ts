/**
 * The router factory of every area, with the validation hook that turns zod issues into the
 * contract's 422 validation_failed naming the field. The definitions' shared vocabulary
 * (envelopes, errors, parameters) is in src/contract/.
 */
import { OpenAPIHono, type RouteConfig, type RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "./context.ts";
import { ApiError } from "./errors.ts";

export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, AppEnv>;

type ZodIssueLike = { path: PropertyKey[]; message: string; code?: string; keys?: readonly string[] };

/** The contract's dotted field name for a zod issue path: `features.0.heading` -> `features[0].heading`. */
export function fieldOf(path: PropertyKey[]): string {
  return path.map((part, index) => (typeof part === "number" ? `[${part}]` : `${index === 0 ? "" : "."}${String(part)}`)).join("");
}

/** 422 validation_failed for the first zod issue, naming its field (contract, "Errors"). */
export function validationFailure(issues: readonly ZodIssueLike[], fallbackField = "body"): ApiError {
  const issue = issues[0];
  // A strict object's unknown key is named itself (owner-api-v3.md: mass assignment refused).
  const path = issue?.code === "unrecognized_keys" && issue.keys?.[0] !== undefined ? [...issue.path, issue.keys[0]] : (issue?.path ?? []);
  const field = path.length > 0 ? fieldOf(path) : fallbackField;
  return new ApiError("validation_failed", `${field}: ${issue?.message ?? "invalid"}`, { field });
}

// Postgres text cannot hold NUL, and a lone surrogate is not Unicode (the driver would store
// U+FFFD instead): such strings would fail inside the database (a 500) or not round-trip.
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what Postgres text cannot store
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Path of the first string in `value` that Postgres cannot store verbatim, or undefined. */
export function unstorableStringPath(value: unknown, path: PropertyKey[] = []): PropertyKey[] | undefined {
  if (typeof value === "string") return UNSTORABLE.test(value) ? path : undefined;
  if (value === null || typeof value !== "object") return undefined;
  for (const [key, item] of Object.entries(value)) {
    const found = unstorableStringPath(item, [...path, Array.isArray(value) ? Number(key) : key]);
    if (found) return found;
  }
  return undefined;
}

/**
 * An OpenAPIHono router whose validation failures become 422 validation_failed, including
 * strings that pass their schema but hold NUL or a lone surrogate.
 */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      const fallback = result.target === "json" ? "body" : result.target;
      if (!result.success) throw validationFailure(result.error.issues, fallback);
      const path = unstorableStringPath(result.data);
      if (path) throw validationFailure([{ path, message: "must not contain NUL characters or unpaired surrogates" }], fallback);
    },
  });
}
