/** The identity route (contract, "Taking part" rule 1 and "Authentication" 6-8). */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent } from "../../contract/envelope.ts";
import { writeErrors } from "../../contract/errors.ts";
import { SlugParam } from "../../contract/params.ts";
import { describedRoute } from "../../contract/route-description.ts";
import { IdentityObject, IdentityRequest } from "./identity.schemas.ts";

export const resolveIdentity = createRoute(
  describedRoute(
    { kind: "write", voter: "optional" },
    {
      method: "post",
      path: "/projects/{slug}/identity",
      operationId: "resolveIdentity",
      summary: "Mint, renew or exchange a voter identity",
      description:
        "With no token (no body, an empty body or {}), mints an anonymous voter and answers 201 with its anon_token, " +
        "shown only here. An anonymous token (body anon_token, else X-VF-Anon) renews that voter: 200. An SSO token " +
        "(body sso_token, else X-VF-Token) outranks an anonymous one and is exchanged for the voter it names: 201 when " +
        "that voter is new, 200 when it existed (its name and email are refreshed from the token). An unknown, " +
        "malformed, expired or foreign-project token answers 401 identity_invalid.",
      tags: ["Identity"],
      request: {
        params: z.object({ slug: SlugParam }),
        body: { content: { "application/json": { schema: IdentityRequest } }, required: false, description: "Optional tokens" },
      },
      responses: {
        200: jsonContent(envelopeOf(IdentityObject), "The presented identity is valid, or the SSO user already had a voter"),
        201: jsonContent(envelopeOf(IdentityObject), "A new voter was created"),
        ...writeErrors,
      },
    },
  ),
);
