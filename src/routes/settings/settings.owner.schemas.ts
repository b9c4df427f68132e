/**
 * SettingsObject (owner-api-v3.md, "Objects"): the snapshot's `project` object
 * (project-snapshot.md) without slug and plan, the three secrets replaced by `*_set` booleans
 * (secrets are write-only). The PATCH body takes every field, secrets as strings (null clears);
 * `settings`, `theme` and the theme's `light` / `dark` are merged key by key (docs/decisions.md: a partial
 * PATCH of a nested object changes only the keys it sends).
 */
import { z } from "@hono/zod-openapi";
import { notificationSettingsShape } from "../../contract/notification-settings.ts";
import { patchBodyOf } from "../../contract/owner-routes.ts";

const flag = (description: string, example: boolean) => z.boolean().openapi({ description, example });

const displayShape = {
  allow_comments: flag("Voters may comment", true),
  allow_suggestions: flag("Voters may suggest features", true),
  allow_voting: flag("Voters may vote", true),
  allow_likes: flag("Voters may like comments", true),
  default_mode: z.string().min(1).max(50).openapi({ description: "View the hosted board opens on", example: "roadmap" }),
  score_is_weighted: flag("Sort top by weighted score (tier multipliers) rather than vote count", false),
  show_archived: flag("Show the archived column", false),
  show_comments: flag("Show comments", true),
  show_denied: flag("Show the denied column", true),
  show_progress: flag("Show progress", true),
  show_views: flag("Show view counts", true),
  show_votes: flag("Show vote counts", true),
};

const color = (example: string) => z.string().min(1).max(100).openapi({ example });
const colorsShape = {
  accent: color("#4f46e5"),
  background: color("#ffffff"),
  border: color("#e5e7eb"),
  card_background: color("#f9fafb"),
  text: color("#111827"),
  text_secondary: color("#6b7280"),
};

export const DisplaySettingsObject = z.object(displayShape).openapi("DisplaySettingsObject");
export const ThemeColorsObject = z.object(colorsShape).openapi("ThemeColorsObject");
const themeShape = {
  font: z.string().min(1).max(100).openapi({ description: "Font family", example: "Inter" }),
  radius: z.string().min(1).max(50).openapi({ description: "Corner radius (CSS length)", example: "8px" }),
};
export const ThemeObject = z.object({ ...themeShape, light: ThemeColorsObject, dark: ThemeColorsObject }).openapi("ThemeObject");

const nullableText = (max: number, description: string, example: string | null) =>
  z.string().max(max).nullable().openapi({ description, example });
const httpUrl = (description: string) =>
  z
    .url({ protocol: /^https?$/, message: "must be an absolute http(s) URL" })
    .max(2048)
    .nullable()
    .openapi({ description: `${description}; absolute http(s) URL, or null`, example: "https://cdn.example.com/logo.png" });

/** An origin as browsers send it: scheme://host[:port], nothing else. */
const origin = z
  .string()
  .max(255)
  .refine(
    (value) => {
      try {
        const url = new URL(value);
        return (url.protocol === "https:" || url.protocol === "http:") && url.origin === value;
      } catch {
        return false;
      }
    },
    { message: "must be an origin: scheme://host[:port], no path or trailing slash" },
  );

const projectFields = {
  name: z.string().trim().min(1).max(200).openapi({ description: "Project name", example: "Lumen" }),
  description: nullableText(2000, "Project description", "Photo editing for everyone"),
  logo_url: httpUrl("Logo address"),
  banner_url: httpUrl("Banner address"),
  currency_symbol: z.string().min(1).max(8).openapi({ description: "Symbol placed before money figures", example: "$" }),
  show_branding: flag("Show the service's branding on the hosted board", true),
  is_private: flag("A private project answers 404 on every public route (owner routes keep working)", false),
  allowed_origins: z
    .array(origin)
    .max(100)
    .openapi({
      description: "Origins the embed key is accepted from (exact match)",
      example: ["https://app.example.com"],
    }),
};

/** The owner's email settings (engagement-api-v3.md, "Email notifications"); from_name shows the project's name until set. */
export const NotificationSettingsObject = z.object(notificationSettingsShape).openapi("NotificationSettingsObject");

export const SettingsObject = z
  .object({
    ...projectFields,
    sso_secret_set: flag("Whether an SSO secret is stored (the secret is write-only)", true),
    stripe_webhook_secret_set: flag("Whether a Stripe webhook signing secret is stored", false),
    paddle_webhook_secret_set: flag("Whether a Paddle webhook signing secret is stored", false),
    settings: DisplaySettingsObject,
    theme: ThemeObject,
    notifications: NotificationSettingsObject,
  })
  .openapi("SettingsObject");

export type SettingsObject = z.infer<typeof SettingsObject>;

const colorsPatch = patchBodyOf(colorsShape);

/** PATCH /settings: any SettingsObject field; secrets as strings, null clears them. */
export const SettingsPatchBody = patchBodyOf({
  ...projectFields,
  sso_secret: z
    .string()
    .min(32)
    .max(512)
    .nullable()
    .openapi({
      description:
        "HS256 secret for voter SSO tokens, at least 32 characters (RFC 7518 3.2: a key at least as long as the hash); " +
        "null removes it. Tokens signed with the old secret answer 401 identity_invalid from then on; voters keep their history",
      example: "3f9c2a7e5b1d4c8f9a0b6e2d7c4f1a8b",
    }),
  stripe_webhook_secret: z
    .string()
    .min(1)
    .max(512)
    .nullable()
    .openapi({ description: "Stripe webhook signing secret (whsec_...); null removes it", example: "whsec_test123" }),
  paddle_webhook_secret: z
    .string()
    .min(1)
    .max(512)
    .nullable()
    .openapi({ description: "Paddle notification secret; null removes it", example: null }),
  settings: patchBodyOf(displayShape).openapi({ description: "Display settings to change; keys not sent keep their value" }),
  theme: patchBodyOf({ ...themeShape, light: colorsPatch, dark: colorsPatch }).openapi({
    description: "Theme keys to change; light and dark are merged key by key too",
  }),
  notifications: patchBodyOf(notificationSettingsShape).openapi({
    description:
      "Email settings to change, merged key by key; email_enabled true while from_address is (or stays) null: 422 naming notifications.from_address",
  }),
}).openapi("PatchSettingsBody");

export type SettingsPatchBody = z.infer<typeof SettingsPatchBody>;
