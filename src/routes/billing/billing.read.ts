/**
 * Pieces both vendor modules use to read a verified event: JSON parsing and schema checks that
 * answer the contract's 422 validation_failed naming the field, and bounded id strings.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { ApiError } from "../../lib/http/errors.ts";
import { unstorableStringPath, validationFailure } from "../../lib/http/router.ts";

/**
 * Verified against when a project has no secret (or the slug names no project), then refused: the
 * refusal costs what a real mismatch costs, so its timing does not tell such projects apart.
 */
export const UNSET_SECRET = randomBytes(32).toString("hex");

/** A vendor id (customer, subscription, price, event): non-empty, at most 255 characters. */
export const VendorId = z.string().min(1).max(255);

/** A status word as the vendor sends it (passed through, so only bounded). */
export const VendorStatus = z.string().min(1).max(100);

/**
 * `rawBody` parsed as JSON. A body that is not JSON (its signature was valid): 422
 * validation_failed, field "body".
 */
export function parseJsonBody(rawBody: string): unknown {
  try {
    return JSON.parse(rawBody);
  } catch {
    throw notJson();
  }
}

/** 422 validation_failed, field "body": a signed body that is not JSON. */
export function notJson(): ApiError {
  return new ApiError("validation_failed", "body: the signed body is not valid JSON", { field: "body" });
}

/**
 * `value` checked against `schema`; a mismatch is 422 validation_failed naming the field as a
 * dotted path under `prefix` (e.g. `data.object.customer`). Strings Postgres cannot store (NUL,
 * lone surrogates) are refused the same way instead of failing inside the database.
 */
export function readAs<S extends z.ZodType>(schema: S, value: unknown, prefix: PropertyKey[] = []): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw validationFailure(result.error.issues.map((issue) => ({ ...issue, path: [...prefix, ...issue.path] })));
  }
  const path = unstorableStringPath(result.data, prefix);
  if (path) throw validationFailure([{ path, message: "must not contain NUL characters or unpaired surrogates" }]);
  return result.data;
}
