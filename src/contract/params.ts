/** Parameter builders of the route definitions: path ids, slugs, pages, booleans, enums. */
import { z } from "@hono/zod-openapi";

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

/**
 * A repeatable query parameter (`?tag=1&tag=2`): hono hands the validator a string for one
 * occurrence and an array for several, so both become an array. An element that fails
 * `element` is reported on the parameter itself (error.field "tag", not "tag[1]").
 */
export function repeatedParam<T extends z.ZodType>(element: T) {
  return z.preprocess((value, ctx) => {
    const list = Array.isArray(value) ? value : [value];
    for (const item of list) {
      const result = element.safeParse(item);
      if (!result.success) {
        ctx.addIssue({ code: "custom", message: `"${String(item)}": ${result.error.issues[0]?.message ?? "invalid"}`, input: item });
        return value;
      }
    }
    return list;
  }, z.array(element));
}
