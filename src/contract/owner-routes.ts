/**
 * Shared pieces of the owner routes' definitions (owner-api-v3.md, "Common rules"): every owner
 * route is tagged "Owner", takes the secret key only, answers the contract's errors, and PATCH
 * bodies are partial and strict (an unknown key is 422 validation_failed naming it).
 * Paths are written in full: `/projects/{slug}/admin/...` (OWNER_PATH).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent } from "./envelope.ts";
import { ownerErrorResponses } from "./errors.ts";
import { SlugParam } from "./params.ts";
import { describedRoute } from "./route-description.ts";

export const OWNER_TAG = "Owner";
/** Prefix of every owner path under /api/v3. */
export const OWNER_PATH = "/projects/{slug}/admin";

/** The secret key alone; identity headers are ignored on owner routes. */
export const ownerSecurity = [{ ApiKey: [] }];

/** Statuses of an owner read (GET). */
export const ownerReadErrors = ownerErrorResponses(401, 403, 404, 405, 422, 429, 500);
/** Statuses of an owner write (POST, PATCH, DELETE). */
export const ownerWriteErrors = ownerErrorResponses(401, 403, 404, 405, 409, 413, 422, 429, 500);

/** Path parameters of a route with no id: the project slug. */
export const OwnerSlugParams = z.object({ slug: SlugParam });

/** `{deleted: true, id}`: the answer of a DELETE of an object with an integer id. */
export const DeletedObject = z
  .object({
    deleted: z.literal(true).openapi({ description: "Always true; failures arrive as errors" }),
    id: z.number().int().openapi({ description: "Id of the deleted object", example: 41 }),
  })
  .openapi("DeletedObject");

/** `{deleted: true, voter_id}`: the answer of DELETE /voters/{voter_id} (erasure). */
export const DeletedVoterObject = z
  .object({
    deleted: z.literal(true).openapi({ description: "Always true; failures arrive as errors" }),
    voter_id: z.string().openapi({ description: "Id of the erased voter", example: "v_3k9x2m" }),
  })
  .openapi("DeletedVoterObject");

/**
 * A PATCH body from the POST body's shape: every key optional, unknown keys refused
 * (owner-api-v3.md: "a key that is absent is unchanged; a key sent as null clears a nullable
 * field; an unknown key is 422 validation_failed naming it").
 */
export function patchBodyOf<T extends z.ZodRawShape>(shape: T) {
  return z.object(shape).partial().strict();
}

/**
 * An owner route's definition described like every keyed route (security: the key alone; the
 * request and response headers of a read or a write, by its method; see describedRoute), and
 * tagged "Owner".
 */
export function ownerRoute<C extends { method: string; responses: Record<string | number, unknown> }>(config: C): C {
  const access = config.method === "get" ? ({ kind: "read" } as const) : ({ kind: "write", voter: "none" } as const);
  return describedRoute(access, { ...config, tags: [OWNER_TAG] });
}

/**
 * The definition of an owner DELETE route: `params` name the object, and a 200 answers the
 * envelope of `deleted` (`{deleted: true, id}` by default) described as `gone`; the owner's write
 * errors otherwise (owner-api-v3.md, "Routes").
 */
export function ownerDeleteRoute<
  const Path extends string,
  Params extends z.ZodObject<z.ZodRawShape>,
  Deleted extends z.ZodTypeAny = typeof DeletedObject,
>(definition: { path: Path; operationId: string; summary: string; description: string; params: Params; deleted?: Deleted; gone: string }) {
  const deleted = (definition.deleted ?? DeletedObject) as Deleted;
  return createRoute(
    ownerRoute({
      method: "delete" as const,
      path: definition.path,
      operationId: definition.operationId,
      summary: definition.summary,
      description: definition.description,
      request: { params: definition.params },
      responses: { 200: jsonContent(envelopeOf(deleted), definition.gone), ...ownerWriteErrors },
    }),
  );
}
