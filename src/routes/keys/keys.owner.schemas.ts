/**
 * KeyObject (owner-api-v3.md, "Objects"): a project key as the owner sees it. Keys are stored
 * hashed, so the whole key appears once, in the answer that made it (Rule 7).
 */
import { z } from "@hono/zod-openapi";

export const KeyObject = z
  .object({
    kind: z.enum(["secret", "embed"]).openapi({ description: "secret (servers, owner routes) or embed (page source)", example: "secret" }),
    hint: z.string().openapi({
      description: 'Last 4 characters of the key; "" for a key made before hints were stored or restored from its digest',
      example: "x9Qa",
    }),
    created_at: z.string().openapi({ description: "When the key was made, RFC 3339 UTC", example: "2026-11-23T11:00:00.000Z" }),
  })
  .openapi("KeyObject");

export const NewKeyObject = KeyObject.extend({
  key: z.string().openapi({
    description: "The whole key: shown in this answer only, store it now",
    example: "fb_sk_3q2y6Zb1QmJ7TnCk4oVx0d9sHf8LwEa5Rr2uPiGtX9Qa",
  }),
}).openapi("NewKeyObject");

export const KeyRegenerateBody = z
  .object({
    kind: z.enum(["secret", "embed"]).openapi({ description: "Which kind of key to replace", example: "embed" }),
  })
  .strict()
  .openapi("RegenerateKeyBody");

export type KeyObject = z.infer<typeof KeyObject>;
