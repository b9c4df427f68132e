/**
 * The unsubscribe routes (engagement-api-v3.md, "Email notifications", "Unsubscribe"): open
 * routes under /api/v3 (no key, no identity, no key budget), reached from the List-Unsubscribe
 * header of every email. The token alone authorizes them; a forged or altered token, or one of
 * an erased voter: 404 not_found. A token is checked (HMAC, constant time) before any database
 * read, so a flood of made-up tokens costs no database work.
 */
import { createRoute } from "@hono/zod-openapi";
import { envelopeOf, jsonContent } from "../../contract/envelope.ts";
import { errorResponses } from "../../contract/errors.ts";
import { describedRoute } from "../../contract/route-description.ts";
import { UnsubscribeObject, UnsubscribeParams } from "./emails.schemas.ts";

export const EMAILS_TAG = "Email";

const errors = errorResponses(404, 405, 413, 500);

export const getUnsubscribe = createRoute(
  describedRoute(
    { kind: "open", cached: false },
    {
      method: "get",
      path: "/unsubscribe/{token}",
      operationId: "getUnsubscribe",
      summary: "Read an unsubscribe link's state",
      description:
        "Whether the voter the token names is unsubscribed from that project's emails; changes nothing. " +
        "A forged or altered token, or one of an erased voter: 404 not_found.",
      tags: [EMAILS_TAG],
      request: { params: UnsubscribeParams },
      responses: {
        200: jsonContent(envelopeOf(UnsubscribeObject), "The current state"),
        ...errors,
      },
    },
  ),
);

export const postUnsubscribe = createRoute(
  describedRoute(
    { kind: "open", cached: false },
    {
      method: "post",
      path: "/unsubscribe/{token}",
      operationId: "postUnsubscribe",
      summary: "Unsubscribe from a project's emails (one-click)",
      description:
        "The RFC 8058 one-click unsubscribe: the voter the token names receives no more email from the project " +
        "(their inbox and subscriptions stay). Idempotent: 200 also when already unsubscribed. Any body (mail " +
        "clients send `List-Unsubscribe=One-Click` as a form) is ignored. A forged or altered token, or one of an " +
        "erased voter: 404 not_found.",
      tags: [EMAILS_TAG],
      request: { params: UnsubscribeParams },
      responses: {
        200: jsonContent(envelopeOf(UnsubscribeObject), "Unsubscribed"),
        ...errors,
      },
    },
  ),
);
