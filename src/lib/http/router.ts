/**
 * Shared pieces of every route definition: the router factory with the validation hook, the
 * envelope schemas, and the error responses each route spreads into its `responses`.
 */
import { OpenAPIHono, type RouteConfig, type RouteHandler, z } from "@hono/zod-openapi";
import type { AppEnv } from "./context.ts";
import { ApiError, type ErrorCode, errorStatus, OWNER_ONLY_ERROR_CODES } from "./errors.ts";

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

type Codes = readonly [ErrorCode, ...ErrorCode[]];
const ALL_CODES = Object.keys(errorStatus) as unknown as Codes;
const PUBLIC_CODES = ALL_CODES.filter((code) => !(OWNER_ONLY_ERROR_CODES as readonly string[]).includes(code)) as unknown as Codes;

/** The error object with `code` one of `codes` (registered under `name`). */
function errorObjectOf(codes: Codes, name: string, contract: string) {
  return z
    .object({
      code: z.enum(codes).openapi({
        description: `Stable machine-readable code; branch on this (${contract}; method_not_allowed goes with 405)`,
        example: "not_found",
      }),
      field: z.string().nullable().openapi({ description: "Parameter or field at fault; set with validation_failed", example: null }),
      message: z.string().openapi({ description: "For people; may change between releases", example: "feature not found" }),
    })
    .openapi(name);
}

/** The public contract's error object: its closed set of codes ("Errors"). */
export const ErrorObject = errorObjectOf(PUBLIC_CODES, "Error", 'contract, "Errors"');

export const ErrorEnvelope = z.object({ data: z.null(), meta: z.null(), error: ErrorObject }).openapi("ErrorEnvelope");

/** The error object of owner routes: the public codes and in_use, signature_invalid, url_not_allowed. */
export const OwnerErrorObject = errorObjectOf(ALL_CODES, "OwnerError", 'contract, "Errors", and owner-api-v3.md, "Common rules"');

export const OwnerErrorEnvelope = z.object({ data: z.null(), meta: z.null(), error: OwnerErrorObject }).openapi("OwnerErrorEnvelope");

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

/** Error responses for the given statuses, each the public error envelope. */
export function errorResponses<S extends number>(...statuses: S[]) {
  return Object.fromEntries(statuses.map((status) => [status, jsonContent(ErrorEnvelope, errorDescriptions[status] ?? "error")])) as Record<
    S,
    ReturnType<typeof jsonContent<typeof ErrorEnvelope>>
  >;
}

/** Error responses of an owner route for the given statuses, each the owner error envelope. */
export function ownerErrorResponses<S extends number>(...statuses: S[]) {
  return Object.fromEntries(
    statuses.map((status) => [status, jsonContent(OwnerErrorEnvelope, errorDescriptions[status] ?? "error")]),
  ) as Record<S, ReturnType<typeof jsonContent<typeof OwnerErrorEnvelope>>>;
}

/** The statuses every keyed read can answer with (contract, "Endpoints", common rules). */
export const readErrors = errorResponses(401, 403, 404, 405, 422, 429, 500);
/** The statuses every keyed write can answer with. */
export const writeErrors = errorResponses(401, 403, 404, 405, 409, 413, 422, 429, 500);

/** 304 on reads: no body at all (contract, "Endpoints": If-None-Match yields 304 with no body). */
export const notModified = { 304: { description: "Not modified: the ETag sent in If-None-Match still matches; no body" } };

/** Path parameter `slug`. */
export const SlugParam = z
  .string()
  .min(1)
  .max(63)
  .openapi({
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
    z
      .number({ error: (issue) => (issue.code === "invalid_type" ? "must be an integer written in decimal digits" : undefined) })
      .int()
      .min(min)
      .max(max),
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
  page: integerParam(1, 1_000_000)
    .default(1)
    .openapi({
      param: { name: "page", in: "query" },
      description: "Page, one based",
      example: 1,
    }),
  per_page: integerParam(1, 100)
    .default(20)
    .openapi({
      param: { name: "per_page", in: "query" },
      description: "Items per page, at most 100",
      example: 20,
    }),
};

/**
 * A true/false query parameter: the strings "true" and "false" only (anything else answers 422
 * validation_failed naming the parameter, as z.enum(["true", "false"]) did), read as a boolean
 * and documented as `type: boolean` so generated clients take and send a boolean.
 */
export function booleanParam() {
  return z.preprocess(
    (value) => (value === "true" ? true : value === "false" ? false : value),
    z.boolean({ error: 'Invalid option: expected one of "true"|"false"' }),
  );
}

/**
 * A response string whose known values may gain members (contract, "Versioning": FeatureObject.status
 * and MessageObject.kind; clients must tolerate unknown members). Documented as a plain string
 * with the known values in `x-extensible-enum`, not as `enum`: generators turn `enum` into closed
 * types or validators that would reject a member added later.
 */
export function extensibleEnum(values: readonly string[], description: string, example: string) {
  return z.string().openapi({ description, example, "x-extensible-enum": [...values] });
}

// ---------------------------------------------------------------------------------------------
// Headers, parameters and security in the description. Every piece below is built once, when
// the route definitions are created at start; nothing here runs per request.

type HeaderComponent = { description: string; schema: Record<string, unknown> };

/**
 * Response headers (contract, "Limits", "Versioning", "Endpoints"), registered once under
 * components/headers and referenced from each response they go with.
 */
const responseHeaders = {
  "X-Request-Id": {
    description:
      "Id of this request: the client's X-Request-Id echoed when it was usable, else one the server made; quote it when reporting a failure",
    schema: { type: "string", example: "3f0c2a9e-5d61-4a8b-9f1e-2b7c8d4e6a10" },
  },
  "X-API-Version": { description: "API version: always 3", schema: { type: "string", const: "3", example: "3" } },
  "X-RateLimit-Limit": {
    description: "The per-minute budget this request was counted against (reads or writes of the key); absent when the key was refused",
    schema: { type: "integer", example: 1200 },
  },
  "X-RateLimit-Remaining": { description: "Requests left in the budget's current window", schema: { type: "integer", example: 1187 } },
  "X-RateLimit-Reset": { description: "When the budget refills, Unix time in seconds", schema: { type: "integer", example: 1767225660 } },
  "Retry-After": {
    description: "Seconds to wait before retrying (429 rate_limited, 409 idempotency_in_progress)",
    schema: { type: "integer", minimum: 1, example: 12 },
  },
  "Idempotent-Replay": {
    description: "true when this is the recorded response of an earlier request with the same Idempotency-Key; nothing new was created",
    schema: { type: "string", const: "true", example: "true" },
  },
  ETag: {
    description: "Strong entity tag of the body; send it back as If-None-Match",
    schema: { type: "string", example: '"b7831bf91f9026d2fa203b6f20b7fe1ba938f7a4"' },
  },
  "Cache-Control": { description: "Read cache hint: private, max-age=60", schema: { type: "string", example: "private, max-age=60" } },
} as const satisfies Record<string, HeaderComponent>;

type ResponseHeaderName = keyof typeof responseHeaders;

/**
 * Request header parameters, registered once under components/parameters. The voter headers
 * are also security schemes (VoterAnon, VoterToken); they are declared as parameters as well
 * because generators type parameters on every call, while security only reaches them through
 * an auth callback.
 */
const requestHeaders = {
  RequestId: {
    name: "X-Request-Id",
    in: "header",
    required: false,
    description:
      "Client-chosen request id, echoed in the response and logged; used only when it is at most 255 letters, digits, _, - or =, otherwise the server makes one",
    schema: { type: "string", maxLength: 255, example: "checkout-7f3a" },
  },
  IfNoneMatch: {
    name: "If-None-Match",
    in: "header",
    required: false,
    description: "The ETag of a previous answer; when it still matches, the answer is 304 with no body",
    schema: { type: "string", example: '"b7831bf91f9026d2fa203b6f20b7fe1ba938f7a4"' },
  },
  IdempotencyKey: {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description:
      "Makes the write safe to retry: a repeat with the same key (same voter, same route) within 24 hours gets the recorded response with Idempotent-Replay: true and changes nothing. 1 to 200 printable ASCII characters (otherwise 422)",
    schema: { type: "string", minLength: 1, maxLength: 200, pattern: "^[\\x20-\\x7E]+$", example: "vote-41-5b1d" },
  },
  VoterAnon: {
    name: "X-VF-Anon",
    in: "header",
    required: false,
    description:
      "Anonymous voter token from POST /projects/{slug}/identity. Reads: optional, sets has_voted, has_liked, is_own and hides dismissed messages. Writes: this or X-VF-Token is required",
    schema: { type: "string", example: "anon_2b7c8d4e6a10f3a9" },
  },
  VoterToken: {
    name: "X-VF-Token",
    in: "header",
    required: false,
    description:
      "Voter SSO token (HS256 JWT signed with the project's SSO secret; exp and sub required); outranks X-VF-Anon. Optional on reads, this or X-VF-Anon required on writes",
    schema: { type: "string", example: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1LTQyIn0.c2lnbmF0dXJl" },
  },
} as const;

type RequestHeaderName = keyof typeof requestHeaders;

const securitySchemes = {
  ApiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "Project key (secret or embed) from Share & Embed" },
  VoterAnon: { type: "apiKey", in: "header", name: "X-VF-Anon", description: "Anonymous voter token from POST /projects/{slug}/identity" },
  VoterToken: {
    type: "apiKey",
    in: "header",
    name: "X-VF-Token",
    description: "Voter SSO token: HS256 JWT signed with the project's SSO secret, exp and sub required",
  },
} as const;

/** Registers the security schemes, response headers and header parameters the routes refer to. */
export function registerOpenApiComponents(registry: OpenAPIHono<AppEnv>["openAPIRegistry"]): void {
  for (const [name, scheme] of Object.entries(securitySchemes)) registry.registerComponent("securitySchemes", name, scheme);
  for (const [name, header] of Object.entries(responseHeaders)) registry.registerComponent("headers", name, header);
  for (const [name, parameter] of Object.entries(requestHeaders)) registry.registerComponent("parameters", name, parameter);
}

const headerRefs = (names: ResponseHeaderName[]) =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
const parameterRefs = (names: RequestHeaderName[]) => names.map((name) => ({ $ref: `#/components/parameters/${name}` }));

const KEY = [{ ApiKey: [] }];
const KEY_AND_VOTER = [
  { ApiKey: [], VoterAnon: [] },
  { ApiKey: [], VoterToken: [] },
];

/**
 * How a route is reached (contract, "Authentication" and "Endpoints", common rules):
 * - open: no key, no identity, no key-tied rate limit (health, openapi.json, docs); `cached`
 *   when it answers with an ETag and Cache-Control like a read;
 * - read: project key; `voter: "optional"` when an identity, if sent, changes the answer;
 * - write: project key; `voter: "required"` (default), "optional" (the identity route) or "none"
 *   (owner routes: the secret key acts for the project).
 */
export type RouteAccess =
  | { kind: "open"; cached: boolean }
  | { kind: "read"; voter?: "none" | "optional" }
  | { kind: "write"; voter?: "required" | "optional" | "none" };

/**
 * The route `config` with its security, its header parameters (X-Request-Id; If-None-Match on
 * reads; Idempotency-Key on writes; X-VF-Anon / X-VF-Token where an identity is read) and the
 * response headers of each of its responses. The type is `config`'s own, so handlers are typed
 * exactly as before; the additions are description only.
 */
export function describedRoute<C extends { responses: Record<string | number, unknown> }>(access: RouteAccess, config: C): C {
  const isRead = access.kind === "read" || (access.kind === "open" && access.cached);
  const keyed = access.kind !== "open";
  const voter = access.kind === "open" ? "none" : (access.voter ?? (access.kind === "write" ? "required" : "none"));
  const security =
    access.kind === "open" ? [] : voter === "required" ? KEY_AND_VOTER : voter === "optional" && isRead ? [...KEY, ...KEY_AND_VOTER] : KEY;
  const parameters: RequestHeaderName[] = ["RequestId"];
  if (isRead) parameters.push("IfNoneMatch");
  if (access.kind === "write") parameters.push("IdempotencyKey");
  if (voter !== "none") parameters.push("VoterAnon", "VoterToken");
  const responses = Object.fromEntries(
    Object.entries(config.responses).map(([status, response]) => {
      const code = Number(status);
      const names: ResponseHeaderName[] = ["X-Request-Id", "X-API-Version"];
      // The key is checked before the budget is counted: a 401 carries no budget figures.
      if (keyed && code !== 401) names.push("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset");
      if (isRead && (code === 200 || code === 304)) names.push("ETag", "Cache-Control");
      if (code === 429 || code === 409) names.push("Retry-After");
      // Replays return whatever the handler answered; key, identity and budget refusals come first.
      if (access.kind === "write" && code !== 401 && code !== 429) names.push("Idempotent-Replay");
      const own = (response as { headers?: Record<string, unknown> }).headers;
      return [status, { ...(response as object), headers: { ...headerRefs(names), ...own } }];
    }),
  );
  return { ...config, security, parameters: parameterRefs(parameters), responses };
}
