/** The owner's webhook routes (owner-api-v3.md, "Routes": /webhooks...; "Webhooks"). */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent, listEnvelopeOf, notModified } from "../../contract/envelope.ts";
import { DeletedObject, OWNER_PATH, OwnerSlugParams, ownerReadErrors, ownerRoute, ownerWriteErrors } from "../../contract/owner-routes.ts";
import { idParam, integerParam, PageQuery } from "../../contract/params.ts";
import { DeliveryObject, WebhookCreateBody, WebhookObject, WebhookPatchBody, WebhookWithSecretObject } from "./webhooks.owner.schemas.ts";

const WebhookParams = OwnerSlugParams.extend({ webhook_id: idParam("webhook_id", "Webhook id") });
const DeliveryParams = WebhookParams.extend({
  delivery_id: integerParam(1, Number.MAX_SAFE_INTEGER).openapi({
    param: { name: "delivery_id", in: "path" },
    description: "Delivery id",
    example: 1042,
  }),
});

const urlRefusals =
  " A URL that is not https (http only where WEBHOOK_ALLOW_PRIVATE_URLS=true), carries credentials or does not resolve: 422 " +
  "validation_failed naming url; one whose host resolves to a private, loopback, link-local or other non-public address: " +
  "422 url_not_allowed naming url. An unknown event type: 422 validation_failed naming events.";

export const adminListWebhooks = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/webhooks`,
    operationId: "adminListWebhooks",
    summary: "List webhooks",
    description: "The project's webhooks in creation order (secrets are never shown here).",
    request: { params: OwnerSlugParams, query: z.object({ ...PageQuery }) },
    responses: {
      200: jsonContent(listEnvelopeOf(WebhookObject), "A page of webhooks"),
      ...notModified,
      ...ownerReadErrors,
    },
  }),
);

export const adminCreateWebhook = createRoute(
  ownerRoute({
    method: "post",
    path: `${OWNER_PATH}/webhooks`,
    operationId: "adminCreateWebhook",
    summary: "Create a webhook",
    description:
      "Registers a receiver of the project's events made from now on (events empty: every type). The answer carries " +
      `the signing secret, which no other answer shows.${urlRefusals}`,
    request: {
      params: OwnerSlugParams,
      body: { content: { "application/json": { schema: WebhookCreateBody } }, required: true },
    },
    responses: {
      201: jsonContent(envelopeOf(WebhookWithSecretObject), "The new webhook with its secret"),
      ...ownerWriteErrors,
    },
  }),
);

export const adminGetWebhook = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/webhooks/{webhook_id}`,
    operationId: "adminGetWebhook",
    summary: "Get a webhook",
    description: "One webhook of the project (its secret is never shown here).",
    request: { params: WebhookParams },
    responses: {
      200: jsonContent(envelopeOf(WebhookObject), "The webhook"),
      ...notModified,
      ...ownerReadErrors,
    },
  }),
);

export const adminUpdateWebhook = createRoute(
  ownerRoute({
    method: "patch",
    path: `${OWNER_PATH}/webhooks/{webhook_id}`,
    operationId: "adminUpdateWebhook",
    summary: "Change a webhook",
    description:
      "Partial update. enabled: false stops deliveries (pending ones wait); enabled: true resumes them, clears " +
      `disabled_reason and the count of failed deliveries.${urlRefusals}`,
    request: {
      params: WebhookParams,
      body: { content: { "application/json": { schema: WebhookPatchBody } }, required: true },
    },
    responses: {
      200: jsonContent(envelopeOf(WebhookObject), "The webhook after the change"),
      ...ownerWriteErrors,
    },
  }),
);

export const adminDeleteWebhook = createRoute(
  ownerRoute({
    method: "delete",
    path: `${OWNER_PATH}/webhooks/{webhook_id}`,
    operationId: "adminDeleteWebhook",
    summary: "Delete a webhook",
    description: "Deletes the webhook with its delivery log; pending deliveries are dropped.",
    request: { params: WebhookParams },
    responses: {
      200: jsonContent(envelopeOf(DeletedObject), "The webhook was deleted"),
      ...ownerWriteErrors,
    },
  }),
);

export const adminRotateWebhookSecret = createRoute(
  ownerRoute({
    method: "post",
    path: `${OWNER_PATH}/webhooks/{webhook_id}/rotate-secret`,
    operationId: "adminRotateWebhookSecret",
    summary: "Rotate a webhook's secret",
    description:
      "Makes a new signing secret. For 24 hours both the new and the previous secret sign every delivery " +
      "(webhook-signature lists both, space-separated), so the receiver can switch without losing one.",
    request: { params: WebhookParams },
    responses: {
      200: jsonContent(envelopeOf(WebhookWithSecretObject), "The webhook with its new secret"),
      ...ownerWriteErrors,
    },
  }),
);

export const adminTestWebhook = createRoute(
  ownerRoute({
    method: "post",
    path: `${OWNER_PATH}/webhooks/{webhook_id}/test`,
    operationId: "adminTestWebhook",
    summary: "Send a ping",
    description:
      "Sends one ping event (an EventObject of type ping with an evt_ id, data.object the WebhookObject) now, whatever the events filter and even " +
      "while the webhook is disabled, and answers once the attempt is over (at most 15 s). A ping is not retried.",
    request: { params: WebhookParams },
    responses: {
      200: jsonContent(envelopeOf(DeliveryObject), "The ping's delivery after its one attempt (succeeded or failed)"),
      ...ownerWriteErrors,
    },
  }),
);

export const adminListDeliveries = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/webhooks/{webhook_id}/deliveries`,
    operationId: "adminListWebhookDeliveries",
    summary: "List a webhook's deliveries",
    description: "The delivery log, newest first, with each delivery's attempts and last outcome.",
    request: {
      params: WebhookParams,
      query: z.object({
        status: z
          .enum(["pending", "succeeded", "failed"])
          .optional()
          .openapi({ param: { name: "status", in: "query" }, description: "Only deliveries of this status", example: "failed" }),
        ...PageQuery,
      }),
    },
    responses: {
      200: jsonContent(listEnvelopeOf(DeliveryObject), "A page of deliveries"),
      ...notModified,
      ...ownerReadErrors,
    },
  }),
);

export const adminRedeliver = createRoute(
  ownerRoute({
    method: "post",
    path: `${OWNER_PATH}/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver`,
    operationId: "adminRedeliverWebhookDelivery",
    summary: "Deliver again",
    description:
      "Queues a new delivery of the same event (same webhook-id and body, freshly signed, with its own retries): " +
      "due at once, or when the webhook is enabled again.",
    request: { params: DeliveryParams },
    responses: {
      202: jsonContent(envelopeOf(DeliveryObject), "The new delivery, pending"),
      ...ownerWriteErrors,
    },
  }),
);
