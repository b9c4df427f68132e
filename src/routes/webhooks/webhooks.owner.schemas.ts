/**
 * Webhooks and deliveries (owner-api-v3.md, "Webhooks": WebhookObject, DeliveryObject; routes
 * /webhooks...). A webhook's secret is write-only: it appears in the answers of POST /webhooks
 * and rotate-secret only.
 */
import { z } from "@hono/zod-openapi";
import { EVENT_TYPES } from "../../contract/enums.ts";
import { patchBodyOf } from "../../contract/owner-routes.ts";

const webhookFields = {
  id: z.number().int().openapi({ description: "Webhook id", example: 7 }),
  url: z.string().openapi({ description: "Where deliveries are POSTed", example: "https://hooks.example.com/feedback" }),
  events: z.array(z.string()).openapi({
    description: "Event types delivered; empty: every type (pings ignore it)",
    example: ["feature.status_changed", "release.published"],
  }),
  description: z.string().nullable().openapi({ description: "The owner's note", example: "Slack #product" }),
  enabled: z
    .boolean()
    .openapi({ description: "False: nothing is delivered (new events are not queued; pending deliveries wait)", example: true }),
  disabled_reason: z.enum(["gone", "failing"]).nullable().openapi({
    description:
      "Why the service disabled it: gone (the receiver answered 410), failing (100 deliveries failed in a row); null when enabled or disabled by the owner",
    example: null,
  }),
  created_at: z.string().openapi({ description: "RFC 3339", example: "2026-11-23T12:00:00.000Z" }),
};

export const WebhookObject = z.object(webhookFields).openapi("WebhookObject");

export const WebhookWithSecretObject = z
  .object({
    ...webhookFields,
    secret: z.string().openapi({
      description: "Signing secret (whsec_ + base64 of 32 random bytes); shown in this answer only: keep it",
      example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw1Jb5+b1+9Dk=",
    }),
  })
  .openapi("WebhookWithSecretObject");

export type WebhookObject = z.infer<typeof WebhookObject>;

export const DeliveryObject = z
  .object({
    id: z.number().int().openapi({ description: "Delivery id", example: 1042 }),
    webhook_id: z.number().int().openapi({ description: "Webhook id", example: 7 }),
    event_id: z.string().openapi({
      description: "The event's id (evt_...), sent as webhook-id (a ping's too)",
      example: "evt_0000000000d2s00000000003a",
    }),
    event_type: z.string().openapi({ description: "The event's type, or ping", example: "feature.status_changed" }),
    status: z
      .enum(["pending", "succeeded", "failed"])
      .openapi({ description: "pending until it succeeds or its retries are used up", example: "succeeded" }),
    attempts: z.number().int().openapi({ description: "Attempts begun so far", example: 1 }),
    last_status_code: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "HTTP status of the last answer; null when none came", example: 200 }),
    last_error: z.string().nullable().openapi({
      description:
        "Why the last attempt failed (status and an excerpt of the answer, a timeout, a refused address...); null after a success",
      example: null,
    }),
    last_duration_ms: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Milliseconds the last attempt took up to the answer's headers", example: 84 }),
    next_attempt_at: z.string().nullable().openapi({
      description: "RFC 3339: when the next attempt is due (pending); null once over, or while the webhook is disabled",
      example: null,
    }),
    created_at: z.string().openapi({ description: "RFC 3339", example: "2026-11-23T12:00:01.000Z" }),
  })
  .openapi("DeliveryObject");

export type DeliveryObject = z.infer<typeof DeliveryObject>;

const knownTypes: ReadonlySet<string> = new Set(EVENT_TYPES);

// Checked as a whole so that an unknown type is reported on `events` with the catalogue.
const eventTypes = z
  .array(z.string().max(100))
  .max(EVENT_TYPES.length)
  .superRefine((types, context) => {
    const unknown = types.find((type) => !knownTypes.has(type));
    if (unknown !== undefined) {
      context.addIssue({ code: "custom", message: `unknown event type "${unknown}"; known types: ${EVENT_TYPES.join(", ")}` });
    } else if (new Set(types).size !== types.length) {
      context.addIssue({ code: "custom", message: "must not list an event type twice" });
    }
  })
  .openapi({
    description: "Event types to deliver (owner-api-v3.md, Events); empty: every type",
    example: ["feature.status_changed", "release.published"],
  });

/** Longest URL accepted (browsers' and proxies' common limit). */
export const MAX_URL_LENGTH = 2048;

const webhookInput = {
  url: z.string().trim().min(1).max(MAX_URL_LENGTH).openapi({
    description: "https URL (http where WEBHOOK_ALLOW_PRIVATE_URLS=true) whose host resolves to public addresses only",
    example: "https://hooks.example.com/feedback",
  }),
  events: eventTypes,
  description: z
    .string()
    .trim()
    .max(500)
    .nullable()
    .openapi({ description: "The owner's note (at most 500 characters)", example: "Slack #product" }),
};

export const WebhookCreateBody = z
  .object({ ...webhookInput, events: eventTypes.default([]), description: webhookInput.description.default(null) })
  .strict()
  .openapi("CreateWebhookBody");

export const WebhookPatchBody = patchBodyOf({
  ...webhookInput,
  enabled: z.boolean().openapi({
    description: "false stops deliveries; true resumes them (clears disabled_reason and the run of failures; paused deliveries become due)",
    example: true,
  }),
}).openapi("PatchWebhookBody");

export type WebhookCreateBody = z.infer<typeof WebhookCreateBody>;
export type WebhookPatchBody = z.infer<typeof WebhookPatchBody>;
