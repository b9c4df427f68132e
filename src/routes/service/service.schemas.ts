import { z } from "@hono/zod-openapi";

export const HealthObject = z
  .object({
    status: z.string().openapi({ description: "ok when answering", example: "ok" }),
    version: z.string().openapi({ description: "API version", example: "3" }),
  })
  .openapi("HealthObject");

const CheckState = z.enum(["ok", "failed", "timeout", "not_configured"]).openapi({
  description: "ok: answered; failed: an error came back; timeout: no answer within 2 s; not_configured: this instance runs without it",
  example: "ok",
});

export const ReadinessObject = z
  .object({
    status: z.enum(["ready", "not_ready"]).openapi({ description: "ready when every configured dependency answered", example: "ready" }),
    checks: z
      .object({
        database: CheckState.openapi({ description: "Postgres (or the embedded database): `select 1`" }),
        redis: CheckState.openapi({ description: "Redis: PING on the connection every keyed request uses" }),
      })
      .openapi({ description: "Outcome of each dependency's probe" }),
  })
  .openapi("ReadinessObject");

/** The error object of a 503 from /ready: its code names the first dependency that failed. */
export const ReadinessErrorObject = z
  .object({
    code: z.enum(["database_unavailable", "redis_unavailable"]).openapi({
      description: "The first failing dependency (database before redis); `data.checks` lists every one",
      example: "database_unavailable",
    }),
    field: z.null().openapi({ description: "Always null here" }),
    message: z.string().openapi({ description: "For people; may change", example: "database: no answer within 2000 ms" }),
  })
  .openapi("ReadinessError");
