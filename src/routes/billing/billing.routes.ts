/**
 * The billing webhook routes (owner-api-v3.md, "Routes": POST /api/v3/billing/stripe/{slug} and
 * /api/v3/billing/paddle/{slug}; "Billing sync"). Open routes: no key and no key-tied budget,
 * authenticated by the vendor's signature on the raw body; a per-project budget bounds floods.
 * The body is declared for the description only (a plain schema object, not zod): it must reach
 * the handler unparsed, since the signature covers its exact bytes and is checked first.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent } from "../../contract/envelope.ts";
import { OwnerErrorEnvelope, ownerErrorResponses } from "../../contract/errors.ts";
import { SlugParam } from "../../contract/params.ts";
import { describedRoute } from "../../contract/route-description.ts";
import { ReceivedObject } from "./billing.schemas.ts";

export const BILLING_TAG = "Billing";

const budgetHeaders = {
  "X-RateLimit-Limit": { $ref: "#/components/headers/X-RateLimit-Limit" },
  "X-RateLimit-Remaining": { $ref: "#/components/headers/X-RateLimit-Remaining" },
  "X-RateLimit-Reset": { $ref: "#/components/headers/X-RateLimit-Reset" },
};

/** A response that also carries the project's billing budget headers. */
function withBudget<T extends object>(response: T) {
  return { ...response, headers: budgetHeaders };
}

// 404 only when the project is deleted or restored while a verified event is being applied.
const errors = ownerErrorResponses(404, 405, 413, 422, 429, 500);

function billingRoute(system: "stripe" | "paddle") {
  const vendor = system === "stripe" ? "Stripe" : "Paddle";
  const signatureHeader = system === "stripe" ? "stripe-signature" : "paddle-signature";
  const signatureHelp =
    system === "stripe"
      ? "Stripe-Signature (`t=...,v1=...`), verified by the stripe library's webhooks.constructEvent; a timestamp over 300 s from the server's clock, past or ahead, is refused"
      : "Paddle-Signature (`ts=...;h1=...`: HMAC-SHA256 of `ts:body`), verified by @paddle/paddle-node-sdk; a timestamp over 5 s from the server's clock, past or ahead, is refused";
  return createRoute(
    describedRoute(
      { kind: "open", cached: false },
      {
        method: "post",
        path: `/billing/${system}/{slug}`,
        operationId: `receive${vendor}Event`,
        summary: `Receive a ${vendor} webhook event`,
        description:
          `Point ${vendor} at this URL. The raw body is verified with the project's ${system}_webhook_secret ` +
          `(settings) through the ${signatureHelp}. A missing or bad signature, no secret set, or an unknown ` +
          "project: 400 signature_invalid, nothing changed. A verified event sets the billing fields of every voter " +
          "whose customer id of this system matches (owner-api-v3.md, Billing sync) in one transaction and emits " +
          "voter.billing_changed per changed voter. An event already processed, one older than the last applied to " +
          "its subscription, an unknown type or a customer nobody carries: 200, nothing changed. A verified body " +
          "that is not JSON or lacks a field the event type needs: 422 validation_failed. Counted against the " +
          "project's billing budget (RATE_LIMIT_BILLING_PER_MINUTE; 429 with Retry-After past it).",
        tags: [BILLING_TAG],
        request: {
          params: z.object({ slug: SlugParam }),
          headers: z.object({
            [signatureHeader]: z
              .string()
              .optional()
              .openapi({ description: `The ${vendor} signature of the body (required; 400 signature_invalid without it)` }),
          }),
          body: {
            content: {
              "application/json": {
                schema: { type: "object", description: `A ${vendor} event exactly as ${vendor} sends it (raw bytes)` },
              },
            },
            required: true,
          },
        },
        responses: {
          200: withBudget(jsonContent(envelopeOf(ReceivedObject), "Verified: applied, already applied, or nothing to change")),
          400: withBudget(
            jsonContent(OwnerErrorEnvelope, "signature_invalid: missing or bad signature, no secret set, or no such project"),
          ),
          ...errors,
          422: withBudget(errors[422]),
          429: withBudget(errors[429]),
        },
      },
    ),
  );
}

export const receiveStripeEvent = billingRoute("stripe");
export const receivePaddleEvent = billingRoute("paddle");
