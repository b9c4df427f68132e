/** The owner's key routes (owner-api-v3.md, "Routes": GET /keys, POST /keys/regenerate; Rule 7). */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent, listEnvelopeOf, notModified } from "../../contract/envelope.ts";
import { OWNER_PATH, OwnerSlugParams, ownerReadErrors, ownerRoute, ownerWriteErrors } from "../../contract/owner-routes.ts";
import { PageQuery } from "../../contract/params.ts";
import { KeyObject, KeyRegenerateBody, NewKeyObject } from "./keys.owner.schemas.ts";

export const adminListKeys = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/keys`,
    operationId: "adminListKeys",
    summary: "List the project's keys",
    description: "Every key of the project, secret keys first, with its last 4 characters; never the key itself.",
    request: { params: OwnerSlugParams, query: z.object({ ...PageQuery }) },
    responses: {
      200: jsonContent(listEnvelopeOf(KeyObject), "A page of keys"),
      ...notModified,
      ...ownerReadErrors,
    },
  }),
);

export const adminRegenerateKey = createRoute(
  ownerRoute({
    method: "post",
    path: `${OWNER_PATH}/keys/regenerate`,
    operationId: "adminRegenerateKey",
    summary: "Replace the key of a kind",
    description:
      "Replaces every key of the kind by one new key (format fb_sk_ or fb_ek_ followed by 43 base64url characters). " +
      "The old key answers 401 invalid_key on every instance before this answer is sent; regenerating the secret key " +
      "with the secret key itself works (this answer still arrives). The whole key appears only here.",
    request: {
      params: OwnerSlugParams,
      body: { content: { "application/json": { schema: KeyRegenerateBody } }, required: true },
    },
    responses: {
      201: jsonContent(envelopeOf(NewKeyObject), "The new key, in full this once"),
      ...ownerWriteErrors,
    },
  }),
);
