/**
 * What every route definition declares besides its body and answers: the security schemes, the
 * request header parameters and the response headers (contract, "Authentication", "Limits",
 * "Versioning", "Endpoints"), added to a definition by `describedRoute`.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";

type OpenAPIRegistry = OpenAPIHono["openAPIRegistry"];

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
export function registerOpenApiComponents(registry: OpenAPIRegistry): void {
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
 * - read: project key; `voter: "optional"` when an identity, if sent, changes the answer,
 *   "required" when the answer is the voter's own (401 identity_required without one);
 * - write: project key; `voter: "required"` (default), "optional" (the identity route) or "none"
 *   (owner routes: the secret key acts for the project).
 */
export type RouteAccess =
  | { kind: "open"; cached: boolean }
  | { kind: "read"; voter?: "none" | "optional" | "required" }
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
