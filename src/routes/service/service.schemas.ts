import { z } from "@hono/zod-openapi";

export const HealthObject = z
  .object({
    status: z.string().openapi({ description: "ok when answering", example: "ok" }),
    version: z.string().openapi({ description: "API version", example: "3" }),
  })
  .openapi("HealthObject");
