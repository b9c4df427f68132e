/** The OpenAPI 3.1 description served at /openapi.json and committed as openapi/openapi.json. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./context.ts";

export function buildOpenApiDocument(app: OpenAPIHono<AppEnv>) {
  return app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Feedback Board API",
      version: "3",
      description:
        "Public JSON API of a feedback and voting board: features, votes, comments, changelog, in-app messages, voter identities and revenue reporting. Every body is the envelope {data, meta, error}.",
      license: { name: "Proprietary" },
    },
    servers: [{ url: "/", description: "This host; every path carries the /api/v3 prefix" }],
    tags: [
      { name: "Service", description: "Open routes: no key, no identity" },
      { name: "Board", description: "Board document: structure, display settings, theme" },
      { name: "Features", description: "Features (suggestions and roadmap items)" },
      { name: "Votes", description: "Voting on features" },
      { name: "Comments", description: "Comments, replies and likes" },
      { name: "Changelog", description: "Published releases" },
      { name: "Messages", description: "In-app messages" },
      { name: "Identity", description: "Voter identities" },
      { name: "Revenue", description: "Revenue reporting (secret key only)" },
    ],
  });
}
