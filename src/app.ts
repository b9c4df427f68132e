/**
 * createApp(deps): the whole HTTP surface (docs/architecture.md, "The request path"). Open routes
 * first, then
 * the keyed chain for /board and /projects/*: project key -> rate limit (+ content revision) ->
 * voter identity -> content revision bump after writes -> idempotency -> [shared read cache on
 * cacheable reads] -> validated handler. One error handler turns every failure into the envelope.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { registerOpenApiComponents } from "./contract/route-description.ts";
import { isTimeLimit, sqlStateOf } from "./lib/data/transaction.ts";
import type { AppDeps, AppEnv } from "./lib/http/context.ts";
import { failure } from "./lib/http/envelope.ts";
import { ApiError } from "./lib/http/errors.ts";
import { apiKeyMiddleware } from "./middleware/api-key.ts";
import { preflightMiddleware } from "./middleware/cors.ts";
import { idempotencyMiddleware } from "./middleware/idempotency.ts";
import { methodCheckMiddleware } from "./middleware/method-check.ts";
import { ownerChangeMiddleware } from "./middleware/owner-change.ts";
import { rateLimitMiddleware } from "./middleware/rate-limit.ts";
import { readCacheMiddleware } from "./middleware/read-cache.ts";
import { bodyLimitMiddleware, jsonShapeMiddleware } from "./middleware/request-body.ts";
import { logRequest, requestIdMiddleware } from "./middleware/request-id.ts";
import { cachedReadHitMiddleware, contentRevisionMiddleware } from "./middleware/shared-read-cache.ts";
import { apiStaticHeaders, staticHeadersMiddleware } from "./middleware/static-headers.ts";
import { voterMiddleware } from "./middleware/voter.ts";
import { FEED_PATHS } from "./routes/feeds/index.ts";
import { IMPORT_BODY_LIMIT } from "./routes/imports/index.ts";
import { registerApiRouters } from "./routes/index.ts";
import { createMcpMethodCheck, createMcpRequestChain, MCP_PATH } from "./routes/mcp/index.ts";
import { createServiceRouter, registerDemoPage, widgetBundleCache } from "./routes/service/index.ts";

export const API_PREFIX = "/api/v3";

/** The message of a request stopped by a database time limit (src/lib/data/transaction.ts isTimeLimit). */
export const TIME_LIMIT_MESSAGE =
  "the database was busy (a lock or time limit was reached); nothing was written, safe to retry in a few seconds";

/** Builds the application; no I/O happens until a request arrives. */
export function createApp(deps: AppDeps) {
  const app = new OpenAPIHono<AppEnv>();

  app.use(staticHeadersMiddleware(apiStaticHeaders()));
  app.use(requestIdMiddleware());
  app.use(async (c, next) => {
    c.set("deps", deps);
    const started = performance.now();
    await next();
    logRequest(deps.logger, c.get("requestId"), c.req.method, c.req.path, c.get("sentStatus") ?? c.res.status, started);
  });
  // Preflights are decided by where they point (src/middleware/cors.ts): the most specific
  // mount answers first, and an answered preflight goes no further.
  app.use(`${API_PREFIX}/projects/:slug/*`, preflightMiddleware("project"));
  app.use(`${API_PREFIX}/board`, preflightMiddleware("board"));
  app.use(preflightMiddleware("none"));
  // The MCP endpoint's 405 carries the rate headers when the request carries a key of the project.
  app.use(`${API_PREFIX}${MCP_PATH}`, createMcpMethodCheck());
  app.use(methodCheckMiddleware(app));
  // POST /imports declares its own limit (imports-v3.md: 50 MB); every other route keeps one megabyte.
  app.use(bodyLimitMiddleware(undefined, [IMPORT_BODY_LIMIT]));
  app.use(`${API_PREFIX}/*`, readCacheMiddleware());
  // Owner routes, the identity route and the feeds share the keyed chain; the mark tells its steps
  // whose rules apply (owner-api-v3.md "Common rules"; the identity route resolves its own voter;
  // the feeds take the embed key as ?key=, engagement-api-v3.md "Feeds").
  app.use(`${API_PREFIX}/projects/:slug/admin/*`, async (c, next) => {
    c.set("access", "owner");
    await next();
  });
  app.use(`${API_PREFIX}/projects/:slug/identity`, async (c, next) => {
    c.set("access", "identity");
    await next();
  });
  for (const path of FEED_PATHS) {
    app.use(`${API_PREFIX}${path}`, async (c, next) => {
      c.set("access", "feed");
      await next();
    });
  }
  const keyedChain = () => [
    apiKeyMiddleware(),
    rateLimitMiddleware(),
    cachedReadHitMiddleware(),
    voterMiddleware(),
    contentRevisionMiddleware(),
    ownerChangeMiddleware(),
    idempotencyMiddleware(),
  ];
  app.use(`${API_PREFIX}/board`, ...keyedChain());
  // The MCP endpoint has a chain of its own (src/routes/mcp): its budget depends on the message,
  // and the tool calls it runs in process take the keyed chain below.
  app.use(`${API_PREFIX}${MCP_PATH}`, ...createMcpRequestChain());
  // A regular expression test per step: hono's `except` composes the chain anew on every request.
  const mcpPath = new RegExp(`^${API_PREFIX}${MCP_PATH.replace(":slug", "[^/]+")}$`);
  const unlessMcp =
    (step: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> =>
    (c, next) =>
      mcpPath.test(c.req.path) ? next() : step(c, next);
  app.use(`${API_PREFIX}/projects/:slug/*`, ...keyedChain().map(unlessMcp));
  // After the key and rate checks, so that a flood of wide bodies spends its sender's budget.
  app.use(jsonShapeMiddleware());

  const widget = widgetBundleCache();
  app.route(API_PREFIX, createServiceRouter(app, API_PREFIX, widget));
  registerDemoPage(app, API_PREFIX, widget);
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
    if (isTimeLimit(error)) {
      // Contract "Errors": internal is the retryable 500; its Retry-After is reserved to 429 and
      // idempotency conflicts, so the message says it instead. The transaction was rolled back
      // and the idempotency middleware frees the key on any 5xx.
      deps.logger.warn({ req_id: c.get("requestId"), sqlstate: sqlStateOf(error), err: error }, "database time limit");
      return c.json(failure(new ApiError("internal", TIME_LIMIT_MESSAGE)), 500);
    }
    deps.logger.error({ req_id: c.get("requestId"), err: error }, "unhandled error");
    return c.json(failure(new ApiError("internal", "internal error; safe to retry")), 500);
  });

  registerOpenApiComponents(app.openAPIRegistry);
  return app;
}

export type App = ReturnType<typeof createApp>;
