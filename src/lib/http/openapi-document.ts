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
      // OpenAPI 3.1's license.identifier (an SPDX expression; LicenseRef- names a license of one's
      // own), which the generator's 3.0-shaped LicenseObject type does not list.
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" } as { name: string },
      // Only the deployment knows who runs it: the contact is named, not addressed.
      contact: { name: "The operator of the deployment serving this document" },
    },
    // Generated clients append the paths, which carry the /api/v3 prefix, to servers[0]: the
    // service's origin, which only the deployment knows. A relative "/" resolves against the
    // page or process using the client, not the service; the variables default to the local
    // instance `npm start` serves.
    servers: [
      {
        url: "{scheme}://{host}",
        description: "The service's origin; every path carries the /api/v3 prefix",
        variables: {
          scheme: { enum: ["https", "http"], default: "http", description: "https in production" },
          host: { default: "localhost:8080", description: "Host name and port of the service" },
        },
      },
    ],
    tags: [
      { name: "Service", description: "Open routes: no key, no identity" },
      { name: "Board", description: "Board document: structure, display settings, theme" },
      { name: "Features", description: "Features (suggestions and roadmap items)" },
      { name: "Votes", description: "Voting on features" },
      { name: "Comments", description: "Comments, replies and likes" },
      { name: "Changelog", description: "Published releases" },
      { name: "Feeds", description: "Atom feeds of the changelog and the roadmap (also with the embed key as ?key=)" },
      { name: "Messages", description: "In-app messages" },
      { name: "Identity", description: "Voter identities" },
      { name: "Notifications", description: "The voter's in-app notification inbox" },
      { name: "Subscriptions", description: "Features a voter follows (engagement-api-v3.md)" },
      { name: "Revenue", description: "Revenue reporting (secret key only)" },
      {
        name: "Owner",
        description:
          "Owner API under /projects/{slug}/admin: the project's content, voters, settings, keys, webhooks and events (secret key only)",
      },
      {
        name: "Billing",
        description: "Stripe and Paddle webhooks that sync voters' billing fields; authenticated by the vendor's signature",
      },
      { name: "Email", description: "Unsubscribe links of the notification emails: open routes authorized by their signed token" },
      { name: "Webhooks", description: "What the service POSTs to the owner's webhooks: one delivery per event type (Standard Webhooks)" },
      { name: "MCP", description: "Model Context Protocol endpoint: owner tools for AI assistants (secret key only)" },
    ],
  });
}
