/**
 * Request bodies (contract, "Limits": at most one megabyte, 413 too_large above; docs/architecture.md,
 * "The request path": the body limit). bodyLimitMiddleware refuses a body over the limit however it is
 * framed, and on a real connection answers that 413 with `Connection: close` and closes cleanly;
 * any body the app left unread is discarded so that a kept-alive connection serves the next
 * request. jsonShapeMiddleware refuses a JSON body wider or deeper than any route can use before
 * it is parsed (lib/http/json-shape.ts).
 */
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../lib/http/context.ts";
import { ApiError, validationError } from "../lib/http/errors.ts";
import { JSON_SHAPE_LIMITS, type JsonShapeLimits, jsonShapeViolation } from "../lib/http/json-shape.ts";
import { closeAfterResponse, discardRestOfBody } from "../lib/runtime/node-http.ts";
import { nodeRequest, requestBodyBytes } from "../lib/runtime/runtime-adapter.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

function tooLarge(what = "one megabyte"): ApiError {
  return new ApiError("too_large", `the request body is over ${what}`, { headers: { Connection: "close" } });
}

/**
 * A route's own body limit instead of MAX_BYTES, declared by the route's area (imports-v3.md:
 * POST /imports takes 50 MB): requests of `method` whose path matches `path`.
 */
export interface BodyLimitException {
  method: string;
  path: RegExp;
  maxBytes: number;
  /** The limit in words for the 413's message ("50 MB"). */
  what: string;
}

/**
 * 413 too_large past `maxBytes` (or the limit of the first of `exceptions` the request matches):
 * a Content-Length over it at once, a chunked body once it passes it (hono's bodyLimit counts it
 * as it arrives, so a longer body is refused without being held).
 */
export function bodyLimitMiddleware(
  defaultMaxBytes = MAX_BODY_BYTES,
  exceptions: readonly BodyLimitException[] = [],
): MiddlewareHandler<AppEnv> {
  const limiter = (maxSize: number, what?: string) =>
    bodyLimit({
      maxSize,
      onError: () => {
        throw tooLarge(what);
      },
    });
  const defaultLimit = { maxBytes: defaultMaxBytes, limitBody: limiter(defaultMaxBytes), what: undefined as string | undefined };
  const special = exceptions.map((e) => ({ ...e, limitBody: limiter(e.maxBytes, e.what) }));
  return async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    const method = c.req.method;
    const path = c.req.path;
    const { maxBytes, limitBody, what } = special.find((e) => e.method === method && e.path.test(path)) ?? defaultLimit;
    const incoming = nodeRequest(c);
    // In-process requests, without node's message, always go through hono's limit.
    if (incoming === undefined) return limitBody(c, next);
    // Node's parser framed the message: Content-Length (digits, checked by it) or chunked. An
    // HTTP/1.1 message with neither, or with a length of 0, has no body; hono's bodyLimit would
    // build a full Request to learn that, which a vote (no body, `Content-Length: 0` from fetch
    // and browsers) would pay for on every call.
    const length = incoming.headers["content-length"];
    const chunked = incoming.headers["transfer-encoding"] !== undefined;
    if (!chunked && (length === undefined || length === "0")) return next();
    let closing = false;
    try {
      if (chunked) await limitBody(c, next);
      else if (Number(length) > maxBytes) throw tooLarge(what);
      else await next();
    } catch (error) {
      closing = error instanceof ApiError && error.code === "too_large";
      if (closing) closeAfterResponse(incoming);
      throw error;
    } finally {
      if (!closing) discardRestOfBody(incoming, maxBytes);
    }
  };
}

// The media types hono's validator parses as JSON, and a little more (the scan is cheap).
const JSON_MEDIA_TYPE = /json/i;

/** 422 validation_failed (field "body") for a JSON body past `limits`, before it is parsed. */
export function jsonShapeMiddleware(limits: Readonly<JsonShapeLimits> = JSON_SHAPE_LIMITS): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD" || method === "OPTIONS") return next();
    if (!JSON_MEDIA_TYPE.test(c.req.header("Content-Type") ?? "")) return next();
    // requestBodyBytes leaves the bytes' text for the validator's c.req.json() to parse.
    const violation = jsonShapeViolation(await requestBodyBytes(c), limits);
    if (violation !== undefined) throw validationError("body", `${violation}; no request takes that`);
    return next();
  };
}
