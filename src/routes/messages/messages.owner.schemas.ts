/**
 * Bodies of the owner message routes (owner-api-v3.md, Routes /messages; Rule 5). Field shapes
 * follow the snapshot's message (project-snapshot.md); the rules across fields (action_label
 * needs action_url, min <= max version, starts_at <= ends_at) are checked by the handler on the
 * message as it will be stored, so a PATCH is judged together with the fields it leaves alone.
 */
import { z } from "@hono/zod-openapi";
import semver from "semver";
import { patchBodyOf } from "../../contract/owner-routes.ts";
import { PLATFORMS } from "./messages.routes.ts";

/** Schemes an action may not use: they run code where a client opens the link. */
const FORBIDDEN_SCHEMES = new Set(["javascript:", "data:", "vbscript:", "file:"]);

const version = z
  .string()
  .refine((value) => semver.valid(value) !== null, { message: "must be a valid semver version (e.g. 1.4.0)" })
  .nullable();
const timestamp = z.iso.datetime({ offset: true, message: "must be an RFC 3339 timestamp" }).nullable();

const messageFields = {
  title: z
    .string()
    .trim()
    .min(1, "must not be blank")
    .max(200)
    .openapi({ description: "One-line heading", example: "Maintenance tonight" }),
  body: z
    .string()
    .trim()
    .min(1, "must not be blank")
    .max(5000)
    .openapi({ description: "Plain text", example: "Read-only from 2:00 to 3:00 UTC." }),
  kind: z.enum(["info", "warning", "critical"]).openapi({ description: "Default info", example: "warning" }),
  presentation: z.enum(["banner", "alert"]).openapi({ description: "Default banner", example: "banner" }),
  priority: z.number().int().min(-1_000_000).max(1_000_000).openapi({ description: "Higher first; default 0", example: 10 }),
  action_label: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .nullable()
    .openapi({ description: "Needs action_url (422 action_url otherwise)", example: "Status page" }),
  action_url: z
    .string()
    .max(2000)
    .refine((value) => URL.canParse(value) && !FORBIDDEN_SCHEMES.has(new URL(value).protocol), {
      message: "must be an absolute URL (javascript:, data:, vbscript: and file: are refused)",
    })
    .nullable()
    .openapi({ description: "Absolute URL (https, or an app's own scheme)", example: "https://status.example.com" }),
  is_dismissible: z.boolean().openapi({ description: "Default true", example: true }),
  platforms: z
    .array(z.enum(PLATFORMS))
    .min(1, "must name at least one platform, or be null for everybody")
    .refine((list) => new Set(list).size === list.length, { message: "names a platform twice" })
    .nullable()
    .openapi({ description: "null (default) = everybody; else a subset of ios, macos, web", example: ["ios", "macos"] }),
  min_app_version: version.openapi({ description: "Lowest app version (semver, inclusive)", example: "2.0.0" }),
  max_app_version: version.openapi({ description: "Highest app version (semver, inclusive)", example: null }),
  starts_at: timestamp.openapi({ description: "RFC 3339; null = from now on", example: null }),
  ends_at: timestamp.openapi({
    description: "RFC 3339, not before starts_at; null = until the owner ends it",
    example: "2026-12-01T00:00:00Z",
  }),
};

export const MessageCreateBody = z
  .object({
    ...messageFields,
    kind: messageFields.kind.default("info"),
    presentation: messageFields.presentation.default("banner"),
    priority: messageFields.priority.default(0),
    action_label: messageFields.action_label.default(null),
    action_url: messageFields.action_url.default(null),
    is_dismissible: messageFields.is_dismissible.default(true),
    platforms: messageFields.platforms.default(null),
    min_app_version: messageFields.min_app_version.default(null),
    max_app_version: messageFields.max_app_version.default(null),
    starts_at: messageFields.starts_at.default(null),
    ends_at: messageFields.ends_at.default(null),
  })
  .strict()
  .openapi("MessageCreate");

export const MessagePatchBody = patchBodyOf(messageFields).openapi("MessagePatch");

export type MessageCreateBody = z.infer<typeof MessageCreateBody>;
