/**
 * Router of the open routes. /docs/reference is the reference page /docs points at; it and the
 * Scalar bundle it loads are served from the installed package (reference-page.ts). CORS: only
 * /openapi.json, public and keyless, may be read from any origin (`*`); the others name none.
 * /widget.js is the board widget's module (widget-bundle.ts), loaded by a page's script tag;
 * module scripts are fetched in CORS mode, so it too is readable from any origin.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { sql } from "kysely";
import { Readiness } from "../../lib/data/readiness.ts";
import type { AppDeps, AppEnv } from "../../lib/http/context.ts";
import { success } from "../../lib/http/envelope.ts";
import { ApiError } from "../../lib/http/errors.ts";
import { buildOpenApiDocument } from "../../lib/http/openapi-document.ts";
import { createRouter } from "../../lib/http/router.ts";
import { demoPageHandler } from "./demo-page.ts";
import { referencePage } from "./reference-page.ts";
import * as routes from "./service.routes.ts";
import { type WidgetBundle, widgetBundleCache } from "./widget-bundle.ts";

// Apps built without deps.readiness (tests' own deps) probe their database alone, one Readiness per deps.
const fallbackReadiness = new WeakMap<AppDeps, Readiness>();

/** The deps' readiness probe, or one on its database alone. */
function readinessOf(deps: AppDeps): Readiness {
  if (deps.readiness) return deps.readiness;
  let readiness = fallbackReadiness.get(deps);
  if (!readiness) {
    readiness = new Readiness({ database: () => sql`select 1`.execute(deps.db), redis: undefined });
    fallbackReadiness.set(deps, readiness);
  }
  return readiness;
}

/**
 * `root` is the whole app, whose routes the served description lists; `prefix` is where this
 * router is mounted; `widget` is the widget module's cache, shared with the demo page.
 */
export function createServiceRouter(
  root: OpenAPIHono<AppEnv>,
  prefix: string,
  widget: { get(): Promise<WidgetBundle> } = widgetBundleCache(),
) {
  let cachedDocument: string | undefined;
  const router = createRouter();
  router.openapi(routes.health, (c) => c.json(success({ status: "ok", version: "3" }), 200));
  router.openapi(routes.ready, async (c) => {
    const result = await readinessOf(c.get("deps")).check();
    c.header("Cache-Control", "no-store");
    const data = { status: result.ready ? ("ready" as const) : ("not_ready" as const), checks: result.checks };
    const first = result.failing[0];
    if (!first) return c.json(success(data), 200);
    const message = result.failing
      .map(({ name, state }) => `${name}: ${state === "timeout" ? `no answer within ${result.timeoutMs} ms` : "the probe failed"}`)
      .join("; ");
    const code = first.name === "database" ? ("database_unavailable" as const) : ("redis_unavailable" as const);
    return c.json({ data, meta: null, error: { code, field: null, message } }, 503);
  });
  router.openapi(routes.openApiDocument, (c) => {
    try {
      cachedDocument ??= JSON.stringify(buildOpenApiDocument(root));
    } catch (error) {
      c.get("deps").logger.error({ err: error }, "OpenAPI description could not be generated");
      throw new ApiError("internal", "the description could not be generated");
    }
    return c.body(cachedDocument, 200, { "Content-Type": "application/json; charset=UTF-8", "Access-Control-Allow-Origin": "*" }) as never;
  });
  router.openapi(routes.widgetModule, async (c) => {
    const { body, gzipped, hash } = await widget.get();
    const pinned = c.req.valid("query").v === hash;
    const wantsGzip = /\bgzip\b/.test(c.req.header("Accept-Encoding") ?? "");
    const headers: Record<string, string> = {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": pinned ? "public, max-age=31536000, immutable" : "public, max-age=300",
      "X-Widget-Version": hash,
      "Access-Control-Allow-Origin": "*",
      // One tag per encoding: a cache keeps the two bodies apart.
      ETag: `"${hash}${wantsGzip ? "-gzip" : ""}"`,
      Vary: "Origin, Accept-Encoding",
    };
    if (wantsGzip) headers["Content-Encoding"] = "gzip";
    return c.body(new Uint8Array(wantsGzip ? gzipped : body), 200, headers) as never;
  });
  router.openapi(routes.docs, (c) => c.redirect(`${prefix}/docs/reference`, 301));
  const reference = referencePage(prefix, "Feedback Board API v3");
  router.get("/docs/reference", reference.servePage);
  router.get(reference.bundlePath, reference.serveBundle);
  return router;
}

/** GET /demo, mounted on the app outside the prefix (demo-page.ts), sharing the widget cache. */
export function registerDemoPage(app: OpenAPIHono<AppEnv>, prefix: string, widget: { get(): Promise<WidgetBundle> }): void {
  app.get("/demo", demoPageHandler(prefix, widget));
}

export { widgetBundleCache };
