/**
 * createApp(deps): the whole HTTP surface (design.md, "Request path"). Open routes first, then
 * the keyed chain for /board and /projects/*: project key -> rate limit (+ content revision) ->
 * voter identity -> content revision bump after writes -> idempotency -> [shared read cache on
 * cacheable reads] -> validated handler. One error handler turns every failure into the envelope.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { HTTPException } from "hono/http-exception";
import { requestId } from "hono/request-id";
import type { AppDeps, AppEnv } from "./lib/context.ts";
import { failure } from "./lib/envelope.ts";
import { ApiError } from "./lib/errors.ts";
import { apiKeyMiddleware } from "./middleware/api-key.ts";
import { idempotencyMiddleware } from "./middleware/idempotency.ts";
import { methodCheckMiddleware } from "./middleware/method-check.ts";
import { rateLimitMiddleware } from "./middleware/rate-limit.ts";
import { readCacheMiddleware } from "./middleware/read-cache.ts";
import { contentRevisionMiddleware } from "./middleware/shared-read-cache.ts";
import { secureHeaderValues, staticHeadersMiddleware } from "./middleware/static-headers.ts";
import { voterMiddleware } from "./middleware/voter.ts";
import { registerApiRouters } from "./routes/index.ts";
import { createServiceRouter } from "./routes/service/index.ts";

export const API_PREFIX = "/api/v3";
export const MAX_BODY_BYTES = 1024 * 1024;

/** Builds the application; no I/O happens until a request arrives. */
export function createApp(deps: AppDeps) {
  const app = new OpenAPIHono<AppEnv>();

  const exposeHeaders = [
    "ETag", "X-Request-Id", "X-API-Version", "X-RateLimit-Limit", "X-RateLimit-Remaining",
    "X-RateLimit-Reset", "Retry-After", "Idempotent-Replay",
  ];
  app.use(staticHeadersMiddleware(secureHeaderValues({ crossOriginResourcePolicy: "cross-origin" }).then((secure) => [
    ...secure,
    ["X-API-Version", "3"],
    // What hono's cors adds to every answer but a preflight (which gets cors's own headers).
    ["Access-Control-Expose-Headers", exposeHeaders.join(",")],
    ["Vary", "Origin"],
  ])));
  app.use(requestId({ headerName: "X-Request-Id" }));
  app.use(async (c, next) => {
    c.set("deps", deps);
    const started = performance.now();
    await next();
    deps.logger.info(
      {
        req_id: c.get("requestId"),
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
      },
      "request",
    );
  });
  const preflight = cors({
    origin: (origin) => origin,
    allowHeaders: ["X-API-Key", "X-VF-Anon", "X-VF-Token", "Idempotency-Key", "Content-Type", "If-None-Match", "X-Request-Id"],
    exposeHeaders,
    maxAge: 600,
  });
  // Outside preflights, the header hono's cors would add that depends on the request, as a
  // prepared header (Expose-Headers and Vary are static headers, above): hono's cors writes onto
  // c.res before the handler runs, and hono then rebuilds every response as a stream to merge
  // them (measured: a large share of a read's CPU). Same headers on the wire.
  app.use(async (c, next) => {
    if (c.req.method === "OPTIONS") return preflight(c, next);
    const origin = c.req.header("Origin");
    if (origin) c.header("Access-Control-Allow-Origin", origin);
    await next();
  });
  app.use(methodCheckMiddleware(app));
  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new ApiError("too_large", "the request body is over one megabyte");
    },
  });
  // GET and HEAD carry no body, nor does an HTTP/1.1 message that node parsed without
  // Content-Length or Transfer-Encoding; asking for a body anyway builds a full Request object
  // on every call. (In-process requests, without node's message, always go through the limit.)
  app.use((c, next) => {
    const incoming = (c.env as { incoming?: { headers: Record<string, unknown> } } | undefined)?.incoming;
    const bodiless = c.req.method === "GET" || c.req.method === "HEAD"
      || (incoming !== undefined && incoming.headers["content-length"] === undefined && incoming.headers["transfer-encoding"] === undefined);
    return bodiless ? next() : limitBody(c, next);
  });
  app.use(`${API_PREFIX}/*`, readCacheMiddleware());
  for (const path of [`${API_PREFIX}/board`, `${API_PREFIX}/projects/*`]) {
    app.use(path, apiKeyMiddleware(), rateLimitMiddleware(), voterMiddleware(), contentRevisionMiddleware(), idempotencyMiddleware());
  }

  app.route(API_PREFIX, createServiceRouter(app));
  registerApiRouters(app, API_PREFIX);

  app.notFound((c) => c.json(failure(new ApiError("not_found", "no such route")), 404));
  app.onError((error, c) => {
    if (error instanceof ApiError) {
      for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
      return c.json(failure(error), error.status as 400);
    }
    if (error instanceof HTTPException && error.status < 500) {
      // hono's own 4xx (malformed JSON body, bad content type) are validation failures here.
      return c.json(failure(new ApiError("validation_failed", error.message || "malformed request", { field: "body" })), 422);
    }
    deps.logger.error({ req_id: c.get("requestId"), err: error }, "unhandled error");
    return c.json(failure(new ApiError("internal", "internal error; safe to retry")), 500);
  });

  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
    description: "Project key (secret or embed) from Share & Embed",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "VoterAnon", {
    type: "apiKey",
    in: "header",
    name: "X-VF-Anon",
    description: "Anonymous voter token from POST /projects/{slug}/identity",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "VoterToken", {
    type: "apiKey",
    in: "header",
    name: "X-VF-Token",
    description: "Voter SSO token: HS256 JWT signed with the project's SSO secret, exp and sub required",
  });
  return app;
}

export type App = ReturnType<typeof createApp>;
