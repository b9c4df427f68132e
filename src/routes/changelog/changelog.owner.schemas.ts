/**
 * AdminReleaseObject and the bodies of the owner release routes (owner-api-v3.md, Objects and
 * Routes /releases; Rule 4).
 */
import { z } from "@hono/zod-openapi";
import { CHANGELOG_TYPES } from "../../contract/enums.ts";
import { patchBodyOf } from "../../contract/owner-routes.ts";
import { MAX_ID } from "../../contract/params.ts";
import { ReleaseFeatureObject, ReleaseObject } from "./changelog.schemas.ts";

/** Release slugs: lower-case letters, digits and dashes, as slugify (the importer's) makes them. */
export const RELEASE_SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,99}$/;
export const RELEASE_STATUSES = ["draft", "scheduled", "published"] as const;

export const AdminReleaseObject = ReleaseObject.extend({
  view_count: z.number().int().openapi({ description: "Views, whatever show_views says", example: 310 }),
  status: z.enum(RELEASE_STATUSES).openapi({
    description: "draft (published_at null), scheduled (published_at in the future: public by itself at that time) or published",
    example: "published",
  }),
  features: z.array(ReleaseFeatureObject).openapi({ description: "Every feature of the release, public or not, in the release's order" }),
}).openapi("AdminReleaseObject");

const releaseFields = {
  name: z.string().trim().min(1, "must not be blank").max(200).openapi({ description: "Release name", example: "1.5" }),
  slug: z.string().regex(RELEASE_SLUG_PATTERN, "must be lower-case letters, digits and dashes (at most 100)").openapi({
    description: 'Default: from the name ("Version 1.5" -> "version-1-5"); unique in the project (409 already_exists)',
    example: "1-5",
  }),
  body: z
    .string()
    .max(50_000)
    .nullable()
    .openapi({ description: "Markdown note, rendered to body_html when written", example: "## New\n- Dark mode" }),
  is_featured: z.boolean().openapi({ description: "Headline release; default false", example: false }),
  published_at: z.iso.datetime({ offset: true, message: "must be an RFC 3339 timestamp" }).nullable().openapi({
    description: "null: draft; in the future: scheduled; now or past: published",
    example: "2026-12-01T09:00:00Z",
  }),
  features: z
    .array(
      z
        .object({
          feature_id: z.number().int().min(1).max(MAX_ID).openapi({ description: "A feature of this project", example: 41 }),
          changelog_type: z.enum(CHANGELOG_TYPES).default("new").openapi({ description: "Default new", example: "new" }),
        })
        .strict(),
    )
    .max(500)
    .openapi({ description: "What shipped, in order; replaces the whole list when sent. Each feature at most once" }),
};

export const ReleaseCreateBody = z
  .object({
    ...releaseFields,
    slug: releaseFields.slug.optional(),
    body: releaseFields.body.default(null),
    is_featured: releaseFields.is_featured.default(false),
    published_at: releaseFields.published_at.default(null),
    features: releaseFields.features.default([]),
  })
  .strict()
  .openapi("ReleaseCreate");

export const ReleasePatchBody = patchBodyOf(releaseFields).openapi("ReleasePatch");

export type AdminReleaseObject = z.infer<typeof AdminReleaseObject>;
export type ReleaseFeatureInput = z.infer<typeof releaseFields.features>[number];
