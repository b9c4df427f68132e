/** ReleaseObject of the contract ("Resources and their fields", ReleaseObject). */
import { z } from "@hono/zod-openapi";
import { CHANGELOG_TYPES, FEATURE_STATUSES } from "../../contract/enums.ts";
import { extensibleEnum } from "../../contract/params.ts";

/**
 * One feature a release shipped. The contract leaves the element fields open ("element fields
 * not shown"); this API sends the feature's id, heading and status and its changelog type.
 */
export const ReleaseFeatureObject = z
  .object({
    id: z.number().int().openapi({ description: "Feature id", example: 41 }),
    heading: z.string().openapi({ description: "Feature heading", example: "Dark mode" }),
    status: extensibleEnum(
      FEATURE_STATUSES,
      "Feature status: open, planned, in_progress, done, denied, archived; tolerate additions",
      "done",
    ),
    changelog_type: z.enum(CHANGELOG_TYPES).openapi({
      description: "One of new, improvement, fix, security, breaking_change",
      example: "new",
    }),
  })
  .openapi("ReleaseFeatureObject");

export const ReleaseObject = z
  .object({
    id: z.number().int().openapi({ description: "Release id", example: 2 }),
    name: z.string().openapi({ description: "Release name", example: "1.4" }),
    slug: z.string().openapi({ description: "Name in its public changelog address", example: "1-4" }),
    body: z.string().nullable().openapi({ description: "Markdown release note", example: "## What's new" }),
    body_html: z.string().nullable().openapi({
      description: "The note rendered to HTML on the server: raw HTML refused, dangerous link schemes blanked; null when no note",
      example: "<h2>What's new</h2>",
    }),
    is_featured: z.boolean().openapi({ description: "Headline release", example: false }),
    published_at: z.string().nullable().openapi({ description: "RFC 3339 UTC", example: "2026-11-01T09:00:00.000Z" }),
    view_count: z.number().int().nullable().openapi({ description: "null when views are hidden", example: 310 }),
    features: z.array(ReleaseFeatureObject).openapi({
      description: "What shipped, in the release's order; only features the public board lists",
    }),
  })
  .openapi("ReleaseObject");

export type ReleaseObject = z.infer<typeof ReleaseObject>;
export type ReleaseFeatureObject = z.infer<typeof ReleaseFeatureObject>;
