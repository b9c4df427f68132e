/** MessageObject and MessageDismissedObject of the contract ("Resources and their fields"). */
import { z } from "@hono/zod-openapi";
import { MESSAGE_KINDS, MESSAGE_PRESENTATIONS } from "../../contract/enums.ts";
import { extensibleEnum } from "../../contract/params.ts";

export const MessageObject = z
  .object({
    id: z.number().int().openapi({ description: "Message id; used by the dismiss route", example: 5 }),
    title: z.string().openapi({ description: "One-line heading", example: "Maintenance tonight" }),
    body: z.string().openapi({ description: "Plain text, never markup", example: "The board is read-only from 2:00 to 3:00 UTC." }),
    kind: extensibleEnum(MESSAGE_KINDS, "One of info, warning, critical; tolerate additions", "info"),
    presentation: z.enum(MESSAGE_PRESENTATIONS).openapi({
      description: "Hint: banner (top of screen, ignorable) or alert (interrupts)",
      example: "banner",
    }),
    priority: z.number().int().openapi({ description: "Higher first; the list is already in this order", example: 10 }),
    action_label: z.string().nullable().openapi({
      description: "Label of the single action; never set without action_url",
      example: "Read more",
    }),
    action_url: z.string().nullable().openapi({ description: "The one action of the message", example: "https://status.example.com" }),
    is_dismissible: z.boolean().openapi({ description: "false means offer no dismiss control", example: true }),
    starts_at: z.string().nullable().openapi({ description: "RFC 3339 UTC; null if always applied", example: null }),
    ends_at: z.string().nullable().openapi({
      description: "RFC 3339 UTC; null if it runs until the owner ends it",
      example: "2026-12-01T00:00:00.000Z",
    }),
    created_at: z.string().openapi({ description: "RFC 3339 UTC", example: "2026-11-20T08:00:00.000Z" }),
    updated_at: z.string().openapi({ description: "RFC 3339 UTC", example: "2026-11-20T08:00:00.000Z" }),
  })
  .openapi("MessageObject");

export const MessageDismissedObject = z
  .object({
    dismissed: z.literal(true).openapi({
      description: "Always true; the message is not sent to this voter again on any device",
      example: true,
    }),
    message_id: z.number().int().openapi({ description: "The dismissed message", example: 5 }),
  })
  .openapi("MessageDismissedObject");

export type MessageObject = z.infer<typeof MessageObject>;

export const AdminMessageObject = MessageObject.extend({
  platforms: z
    .array(z.string())
    .nullable()
    .openapi({ description: "Platforms aimed at (ios, macos, web); null = everybody", example: ["ios"] }),
  min_app_version: z
    .string()
    .nullable()
    .openapi({ description: "Lowest app version sent to (semver, inclusive), or null", example: "2.0.0" }),
  max_app_version: z
    .string()
    .nullable()
    .openapi({ description: "Highest app version sent to (semver, inclusive), or null", example: null }),
  dismissal_count: z.number().int().openapi({ description: "Voters who dismissed the message", example: 4 }),
}).openapi("AdminMessageObject");

export type AdminMessageObject = z.infer<typeof AdminMessageObject>;
