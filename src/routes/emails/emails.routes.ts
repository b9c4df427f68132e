/**
 * The unsubscribe routes (engagement-api-v3.md, "Email notifications", "Unsubscribe"): open
 * routes under /api/v3 (no key, no identity, no key budget), reached from the List-Unsubscribe
 * header of every email. The token alone authorizes them; a forged or altered token, or one of
 * an erased voter: 404 not_found. A token is checked (HMAC, constant time) before any database
 * read, so a flood of made-up tokens costs no database work.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent } from "../../contract/envelope.ts";
import { errorResponses } from "../../contract/errors.ts";
import { describedRoute } from "../../contract/route-description.ts";
import { UnsubscribeObject, UnsubscribeParams } from "./emails.schemas.ts";

export const EMAILS_TAG = "Email";

const errors = errorResponses(404, 405, 413, 500);

const ACCEPT_RULE =
  "When the Accept header prefers text/html to application/json (a person who opened the link in a browser), " +
  "the answer is an HTML page (text/html; charset=utf-8) instead of JSON; errors stay JSON.";

/** A 200 answer: the JSON envelope of UnsubscribeObject, or the HTML page described by `page`. */
function jsonOrPage(description: string, page: string) {
  const json = jsonContent(envelopeOf(UnsubscribeObject), description);
  return {
    description,
    content: {
      ...json.content,
      "text/html": {
        schema: z.string().openapi({ description: page, example: '<!doctype html><html lang="en">...</html>' }),
      },
    },
  };
}

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
        "A forged or altered token, or one of an erased voter: 404 not_found. " +
        ACCEPT_RULE +
        " The page shows the project's name, the current state and one button that POSTs to the same address.",
      tags: [EMAILS_TAG],
      request: { params: UnsubscribeParams },
      responses: {
        200: jsonOrPage(
          "The current state",
          "The unsubscribe page: the project's name, the current state and one button that POSTs to this address; nothing changes",
        ),
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
        "clients send `List-Unsubscribe=One-Click` as a form) unsubscribes the same way. A forged or altered token, or one of an " +
        "erased voter: 404 not_found. " +
        ACCEPT_RULE +
        " The one-click form (List-Unsubscribe=One-Click) always answers JSON; the page says that it is done.",
      tags: [EMAILS_TAG],
      request: { params: UnsubscribeParams },
      responses: {
        200: jsonOrPage("Unsubscribed", "The page saying that the voter is unsubscribed from the project's emails"),
        ...errors,
      },
    },
  ),
);
