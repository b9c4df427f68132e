/** The unsubscribe routes' answer (engagement-api-v3.md, "Email notifications", "Unsubscribe"). */
import { z } from "@hono/zod-openapi";
import { MAX_UNSUBSCRIBE_TOKEN_LENGTH } from "../../lib/rules/unsubscribe-token.ts";

export const UnsubscribeObject = z
  .object({
    project: z.string().openapi({ description: "The project's slug", example: "lumen" }),
    unsubscribed: z.boolean().openapi({ description: "Whether the voter is unsubscribed from the project's emails", example: true }),
  })
  .openapi("UnsubscribeObject");

export type UnsubscribeObject = z.infer<typeof UnsubscribeObject>;

export const UnsubscribeParams = z.object({
  token: z
    .string()
    .min(1)
    .max(1000)
    .openapi({
      param: { name: "token", in: "path" },
      description: `The token of an email's List-Unsubscribe link (at most ${MAX_UNSUBSCRIBE_TOKEN_LENGTH} characters are ever issued)`,
      example: "lumen.v_8f3a2c.Zk9fJ0m3u5b6QJ2YFv8S9q1d3c4b5a6Z7y8x9w0v1u2",
    }),
});
