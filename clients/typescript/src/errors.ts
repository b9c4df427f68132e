/**
 * The one error class of the client (docs/contract/clients-v3.md, "The TypeScript client":
 * errors are values of one class).
 */

/** What a FeedbackBoardError carries besides its message. */
export interface FeedbackBoardErrorFields {
  /** HTTP status of the answer; 0 when no answer came (network failure). */
  status: number;
  /** The contract's error code (`not_found`, `validation_failed`, ...); `network_error` for status 0. */
  code: string;
  /** The parameter or body field a `validation_failed` names; null otherwise. */
  field: string | null;
  /** The answer's X-Request-Id (quote it to the operator); null when no answer came. */
  requestId: string | null;
  /** Seconds the answer's Retry-After asks to wait (429, 503); null when it sent none. */
  retryAfter: number | null;
}

/**
 * Thrown by every client method for a non-2xx answer (fields from the error envelope
 * `{error: {code, message, field}}` and the X-Request-Id and Retry-After headers) and, with
 * status 0 and code `network_error`, when the request got no answer at all.
 */
export class FeedbackBoardError extends Error implements FeedbackBoardErrorFields {
  readonly status: number;
  readonly code: string;
  readonly field: string | null;
  readonly requestId: string | null;
  readonly retryAfter: number | null;

  constructor(message: string, fields: FeedbackBoardErrorFields, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "FeedbackBoardError";
    this.status = fields.status;
    this.code = fields.code;
    this.field = fields.field;
    this.requestId = fields.requestId;
    this.retryAfter = fields.retryAfter;
  }

  /**
   * The error of a non-2xx `response`. A body that is not the contract's error envelope (a proxy's
   * page, say) gives code `unexpected_response` and the status text as message.
   */
  static async fromResponse(response: Response): Promise<FeedbackBoardError> {
    let envelope: { error?: { code?: unknown; message?: unknown; field?: unknown } } | null = null;
    try {
      envelope = JSON.parse(await response.text());
    } catch {
      envelope = null;
    }
    const error = envelope && typeof envelope === "object" ? envelope.error : undefined;
    const code = typeof error?.code === "string" ? error.code : "unexpected_response";
    const message = typeof error?.message === "string" ? error.message : `HTTP ${response.status} ${response.statusText}`.trim();
    return new FeedbackBoardError(message, {
      status: response.status,
      code,
      field: typeof error?.field === "string" ? error.field : null,
      requestId: response.headers.get("X-Request-Id"),
      retryAfter: retryAfterSeconds(response.headers.get("Retry-After")),
    });
  }

  /** The error of a request that got no answer (`cause`: what fetch threw). */
  static network(cause: unknown): FeedbackBoardError {
    const reason = cause instanceof Error ? cause.message : String(cause);
    return new FeedbackBoardError(
      `network failure: ${reason}`,
      { status: 0, code: "network_error", field: null, requestId: null, retryAfter: null },
      { cause },
    );
  }
}

/** Retry-After as seconds (RFC 9110: delay-seconds or an HTTP date), or null when absent or unreadable. */
export function retryAfterSeconds(value: string | null): number | null {
  if (value === null || value.trim() === "") return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
