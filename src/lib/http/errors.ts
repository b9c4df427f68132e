/**
 * The one error type of the API. The code decides the HTTP status (the contract's "Errors" table,
 * src/contract/errors.ts); the message is for people and may change, the code never does.
 */
import { type ErrorCode, errorStatus } from "../../contract/errors.ts";

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
