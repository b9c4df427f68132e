/**
 * The one error type of the API. The code decides the HTTP status (contract, "Errors" table);
 * the message is for people and may change, the code never does.
 */
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

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly field: string | null;
  /** Overrides the code's status; used only for 409 not_found (withdrawing a vote never cast). */
  readonly status: number;
  /** Extra response headers, such as Retry-After on 429 and idempotency conflicts. */
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { field?: string | null; status?: number; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.field = options.field ?? null;
    this.status = options.status ?? errorStatus[code];
    this.headers = options.headers ?? {};
  }
}

/** 422 validation_failed naming the offending parameter or body field. */
export function validationError(field: string, message: string): ApiError {
  return new ApiError("validation_failed", message, { field });
}

export function notFound(what: string): ApiError {
  return new ApiError("not_found", `${what} not found`);
}
