/**
 * The error vocabulary of the contracts: every code with its HTTP status (the public contract's
 * "Errors" table, plus the owner API's codes from owner-api-v3.md "Common rules"), the error
 * object and envelope schemas, and the error responses each route definition spreads into its
 * `responses`.
 */
import { z } from "@hono/zod-openapi";
import { jsonContent } from "./envelope.ts";

export const errorStatus = {
  missing_key: 401,
  invalid_key: 401,
  key_wrong_project: 403,
  origin_not_allowed: 403,
  identity_required: 401,
  identity_invalid: 401,
  not_allowed: 403,
  voter_banned: 403,
  not_found: 404,
  method_not_allowed: 405,
  already_exists: 409,
  in_use: 409,
  signature_invalid: 400,
  url_not_allowed: 422,
  idempotency_in_progress: 409,
  idempotency_mismatch: 409,
  too_large: 413,
  validation_failed: 422,
  rate_limited: 429,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/**
 * Codes only the owner API and billing routes answer with (owner-api-v3.md, "Common rules"); the
 * public contract's closed set of codes (its "Errors" table) stays without them.
 */
export const OWNER_ONLY_ERROR_CODES = ["in_use", "signature_invalid", "url_not_allowed"] as const satisfies readonly ErrorCode[];
export type ErrorStatus = (typeof errorStatus)[ErrorCode];

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
