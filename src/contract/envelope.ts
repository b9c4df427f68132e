/**
 * The response envelope of the contracts ("Response envelope"): every body has exactly data,
 * meta and error; lists carry the Meta object ("Pagination").
 */
import { z } from "@hono/zod-openapi";

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

/** 304 on reads: no body at all (contract, "Endpoints": If-None-Match yields 304 with no body). */
export const notModified = { 304: { description: "Not modified: the ETag sent in If-None-Match still matches; no body" } };
