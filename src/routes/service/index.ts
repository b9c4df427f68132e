/** Router of the open routes. /docs/reference is the reference page /docs points at. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import type { AppEnv } from "../../lib/context.ts";
import { ApiError } from "../../lib/errors.ts";
import { success } from "../../lib/envelope.ts";
import { buildOpenApiDocument } from "../../lib/openapi-document.ts";
import { createRouter } from "../../lib/openapi.ts";
import * as routes from "./service.routes.ts";

/** `root` is the whole app, whose routes the served description lists. */
export function createServiceRouter(root: OpenAPIHono<AppEnv>) {
  let cachedDocument: string | undefined;
  const router = createRouter();
  router.openapi(routes.health, (c) => c.json(success({ status: "ok", version: "3" }), 200));
  router.openapi(routes.openApiDocument, (c) => {
    try {
      cachedDocument ??= JSON.stringify(buildOpenApiDocument(root));
    } catch (error) {
      c.get("deps").logger.error({ err: error }, "OpenAPI description could not be generated");
      throw new ApiError("internal", "the description could not be generated");
    }
    return c.body(cachedDocument, 200, { "Content-Type": "application/json; charset=UTF-8" }) as never;
  });
  router.openapi(routes.docs, (c) => c.redirect("/api/v3/docs/reference", 301));
  router.get("/docs/reference", Scalar({ url: "/api/v3/openapi.json", pageTitle: "Feedback Board API v3" }));
  return router;
}
