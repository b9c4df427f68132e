/**
 * Shared pieces of every route definition: the router factory with the validation hook, the
 * envelope schemas, and the error responses each route spreads into its `responses`.
 */
import { OpenAPIHono, type RouteConfig, type RouteHandler, z } from "@hono/zod-openapi";
import type { AppEnv } from "./context.ts";
import { ApiError, type ErrorCode } from "./errors.ts";

export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, AppEnv>;

type ZodIssueLike = { path: PropertyKey[]; message: string };

/** The contract's dotted field name for a zod issue path: `features.0.heading` -> `features[0].heading`. */
export function fieldOf(path: PropertyKey[]): string {
  return path
    .map((part, index) => (typeof part === "number" ? `[${part}]` : `${index === 0 ? "" : "."}${String(part)}`))
    .join("");
}

/** 422 validation_failed for the first zod issue, naming its field (contract, "Errors"). */
export function validationFailure(issues: readonly ZodIssueLike[], fallbackField = "body"): ApiError {
  const issue = issues[0];
  const field = issue && issue.path.length > 0 ? fieldOf(issue.path) : fallbackField;
  return new ApiError("validation_failed", `${field}: ${issue?.message ?? "invalid"}`, { field });
}

// Postgres text cannot hold NUL, and a lone surrogate is not Unicode (the driver would store
// U+FFFD instead): such strings would fail inside the database (a 500) or not round-trip.
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

export const ErrorObject = z
  .object({
    code: z.string().openapi({ description: "Stable machine-readable code; branch on this", example: "not_found" }),
    field: z.string().nullable().openapi({ description: "Parameter or field at fault; set with validation_failed", example: null }),
    message: z.string().openapi({ description: "For people; may change between releases", example: "feature not found" }),
  })
  .openapi("Error");

export const ErrorEnvelope = z
  .object({ data: z.null(), meta: z.null(), error: ErrorObject })
  .openapi("ErrorEnvelope");

export const Meta = z
  .object({
    page: z.number().int().openapi({ description: "Current page, one based", example: 1 }),
    per_page: z.number().int().openapi({ description: "Items asked for per page", example: 20 }),
    total: z.number().int().openapi({ description: "Items matching across all pages", example: 42 }),
    total_pages: z.number().int().openapi({ description: "Number of pages", example: 3 }),
    has_more: z.boolean().openapi({ description: "Whether the next page would return anything", example: true }),
  })
  .openapi("Meta");

/** Envelope of a single resource. */
export function envelopeOf<T extends z.ZodType>(data: T) {
  return z.object({ data, meta: z.null(), error: z.null() });
}

/** Envelope of a list with its Meta. */
export function listEnvelopeOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), meta: Meta, error: z.null() });
}

export function jsonContent<T extends z.ZodType>(schema: T, description: string) {
  return { content: { "application/json": { schema } }, description };
}

const errorDescriptions: Record<number, string> = {
  401: "missing_key, invalid_key, identity_required or identity_invalid",
  403: "key_wrong_project, origin_not_allowed, not_allowed or voter_banned",
  404: "not_found: no such project (or a private one) or resource",
  405: "the path does not take this method (Allow lists those it does)",
  409: "already_exists, not_found (withdrawing a vote never cast), idempotency_in_progress or idempotency_mismatch",
  413: "too_large: request body over one megabyte",
  422: "validation_failed: error.field names the parameter or field",
  429: "rate_limited: wait the seconds in Retry-After",
  500: "internal: server failure, safe to retry; quote X-Request-Id",
};

/** Error responses for the given statuses, each the error envelope. */
export function errorResponses<S extends number>(...statuses: S[]) {
  return Object.fromEntries(
    statuses.map((status) => [status, jsonContent(ErrorEnvelope, errorDescriptions[status] ?? "error")]),
  ) as Record<S, ReturnType<typeof jsonContent<typeof ErrorEnvelope>>>;
}

/** The statuses every keyed read can answer with (contract, "Endpoints", common rules). */
export const readErrors = errorResponses(401, 403, 404, 405, 422, 429, 500);
/** The statuses every keyed write can answer with. */
export const writeErrors = errorResponses(401, 403, 404, 405, 409, 413, 422, 429, 500);

export const notModified = { 304: { description: "Not modified: the ETag sent in If-None-Match still matches" } };

/** Path parameter `slug`. */
export const SlugParam = z.string().min(1).max(63).openapi({
  param: { name: "slug", in: "path" },
  description: "Project slug",
  example: "lumen",
});

/**
 * An integer query or path parameter between `min` and `max`, written in decimal digits (an
 * optional minus sign first). Number coercion would also read "0x10", "1e1", " 5" or "5.0" as
 * numbers; those answer 422 validation_failed like any other bad value. Documented as
 * `type: integer` with its bounds, as the coerced form was.
 */
export function integerParam(min: number, max: number) {
  return z.preprocess(
    (value) => (typeof value === "string" && /^-?[0-9]+$/.test(value) ? Number(value) : value),
    z.number({ error: (issue) => (issue.code === "invalid_type" ? "must be an integer written in decimal digits" : undefined) })
      .int().min(min).max(max),
  );
}

/** The largest id Postgres's integer columns hold. */
export const MAX_ID = 2147483647;

/** A positive integer path parameter (feature, comment, release or message id). */
export function idParam(name: string, description: string) {
  return integerParam(1, MAX_ID).openapi({
    param: { name, in: "path" },
    description,
    example: 41,
  });
}

/** page / per_page query parameters (contract, "Pagination"). */
export const PageQuery = {
  page: integerParam(1, 1_000_000).default(1).openapi({
    param: { name: "page", in: "query" },
    description: "Page, one based",
    example: 1,
  }),
  per_page: integerParam(1, 100).default(20).openapi({
    param: { name: "per_page", in: "query" },
    description: "Items per page, at most 100",
    example: 20,
  }),
};

export const keySecurity = [{ ApiKey: [] }];
export const keyAndVoterSecurity: Record<string, string[]>[] = [{ ApiKey: [], VoterAnon: [] }, { ApiKey: [], VoterToken: [] }];
