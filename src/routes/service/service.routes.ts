/** Open routes (contract, "Service"): no key, no identity, no key-tied rate limit. */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent, notModified } from "../../contract/envelope.ts";
import { ErrorEnvelope, errorResponses } from "../../contract/errors.ts";
import { describedRoute } from "../../contract/route-description.ts";
import { HealthObject, ReadinessErrorObject, ReadinessObject } from "./service.schemas.ts";

export const health = createRoute(
  describedRoute(
    { kind: "open", cached: true },
    {
      method: "get",
      path: "/health",
      operationId: "getHealth",
      summary: "Health probe",
      description: "Answers 200 while the process serves requests.",
      tags: ["Service"],
      responses: {
        200: jsonContent(envelopeOf(HealthObject), "The service is answering"),
        ...notModified,
        ...errorResponses(405, 422),
      },
    },
  ),
);

export const ready = createRoute(
  describedRoute(
    { kind: "open", cached: false },
    {
      method: "get",
      path: "/ready",
      operationId: "getReadiness",
      summary: "Readiness probe",
      description:
        "200 while this instance can serve data: the database and Redis (when configured) each answered a probe within 2 s; " +
        "otherwise 503, whose error code names the first failing dependency. Route load balancer traffic on it; " +
        "/health stays the liveness probe (200 while the process answers). At most one probe per dependency is in flight " +
        "whatever the number of callers. Never cached (Cache-Control: no-store).",
      tags: ["Service"],
      responses: {
        200: jsonContent(envelopeOf(ReadinessObject), "Every configured dependency answered"),
        503: jsonContent(
          z.object({ data: ReadinessObject, meta: z.null(), error: ReadinessErrorObject }),
          "A dependency failed or did not answer within 2 s: data.checks says which",
        ),
        ...errorResponses(405, 422),
      },
    },
  ),
);

export const openApiDocument = createRoute(
  describedRoute(
    { kind: "open", cached: true },
    {
      method: "get",
      path: "/openapi.json",
      operationId: "getOpenApiDocument",
      summary: "OpenAPI 3.1 description of this API",
      description:
        "This document: every route, its parameters, bodies, answers and errors, and under `webhooks` the deliveries an " +
        "owner's webhooks receive. Generate clients from it; it is also committed as openapi/openapi.json.",
      tags: ["Service"],
      responses: {
        200: jsonContent(z.object({}).passthrough().openapi({ description: "The OpenAPI 3.1 document" }), "The description"),
        ...notModified,
        ...errorResponses(405, 500),
      },
    },
  ),
);

export const docs = createRoute(
  describedRoute(
    { kind: "open", cached: false },
    {
      method: "get",
      path: "/docs",
      operationId: "getDocs",
      summary: "Documentation redirect",
      description: "301 to the API reference page built from /openapi.json; follow the Location header.",
      tags: ["Service"],
      responses: {
        301: {
          description: "Redirect to the reference page",
          headers: {
            Location: { description: "Where the reference page is", schema: { type: "string", example: "/api/v3/docs/reference" } },
          },
        },
        ...errorResponses(405),
        // A server failure is the only other answer; Redocly's operation-2xx-response accepts default.
        default: jsonContent(ErrorEnvelope, "500 internal: the error envelope"),
      },
    },
  ),
);

export const widgetModule = createRoute(
  describedRoute(
    { kind: "open", cached: true },
    {
      method: "get",
      path: "/widget.js",
      operationId: "getWidgetModule",
      summary: "Board widget module",
      description:
        "The embeddable board widget (docs/widget.md): one JavaScript module that defines the custom element " +
        "`feedback-board`. Gzipped when the request accepts gzip. Without `v` it may be cached for 5 minutes " +
        "(`Cache-Control: public, max-age=300`); with the `v` this answer's X-Widget-Version names, the same bytes may be " +
        "cached for a year (`public, max-age=31536000, immutable`). A `v` naming another build answers the current bytes " +
        "with the 5-minute policy.",
      tags: ["Service"],
      request: {
        query: z.object({
          v: z.string().max(64).optional().openapi({
            description: "The version (X-Widget-Version) the address pins; makes the answer cacheable for a year when it is current",
            example: "ad5428dac032ee3d",
          }),
        }),
      },
      responses: {
        200: {
          description: "The module",
          content: { "text/javascript": { schema: z.string().openapi({ description: "An ES module" }) } },
          headers: {
            "Cache-Control": {
              description: "public, max-age=300; or public, max-age=31536000, immutable at the current ?v=",
              schema: { type: "string", example: "public, max-age=300" },
            },
            "X-Widget-Version": {
              description: "The build's version: load the module as widget.js?v={this} to cache it for a year",
              schema: { type: "string", example: "ad5428dac032ee3d" },
            },
          },
        },
        ...notModified,
        ...errorResponses(405, 422, 500),
      },
    },
  ),
);
