/**
 * The owner's `notifications` settings (engagement-api-v3.md, "Email notifications",
 * "Settings"): one definition of each field's rule, shared by PATCH /settings and the snapshot
 * importer (project-snapshot.md, "Webhooks, merges and engagement") so the two cannot drift.
 */
import { z } from "@hono/zod-openapi";

/** What a project has before its owner sets anything (the migration's column default). */
export const NOTIFICATION_SETTINGS_DEFAULTS = Object.freeze({
  email_enabled: false,
  from_name: null,
  from_address: null,
  reply_to: null,
  digest_minutes: 15,
  board_url: null,
  changelog_url: null,
});

/** The placeholder a board_url must hold: the feature's id goes there. */
export const FEATURE_ID_PLACEHOLDER = "{feature_id}";

/** The placeholder a changelog_url must hold: the release's slug goes there. */
export const RELEASE_SLUG_PLACEHOLDER = "{release_slug}";

/** Whether `value` is an http(s) URL holding `placeholder` (checked with a value put in). */
function isTemplateUrl(value: string, placeholder: string): boolean {
  if (!value.includes(placeholder)) return false;
  try {
    const url = new URL(value.replaceAll(placeholder, "1"));
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

const emailAddress = (description: string, example: string | null) =>
  z.email({ message: "must be an email address" }).max(254).nullable().openapi({ description, example });

/** Each field's rule, without defaults (a PATCH takes any subset; an import fills the defaults). */
export const notificationSettingsShape = {
  email_enabled: z.boolean().openapi({
    description: "Send the notifications by email (needs from_address, and SMTP_URL on the server)",
    example: true,
  }),
  from_name: z
    .string()
    .trim()
    .min(1)
    .max(100)
    // A display name goes into the From header: no control characters (CR/LF would start a header).
    .refine((name) => !/\p{Cc}/u.test(name), { message: "must not contain control characters" })
    .openapi({ description: "Sender name shown in From; the project's name until set", example: "Lumen" }),
  from_address: emailAddress("Sender address (From); required while email_enabled is true", "updates@lumen.example"),
  reply_to: emailAddress("Reply-To address, or null for none", "support@lumen.example"),
  digest_minutes: z.number().int().min(0).max(1440).openapi({
    description: "Minutes a voter's notifications are gathered into one email after the first; 0 sends each on its own",
    example: 15,
  }),
  board_url: z
    .string()
    .max(2048)
    .refine((value) => isTemplateUrl(value, FEATURE_ID_PLACEHOLDER), { message: "must be an http(s) URL containing {feature_id}" })
    .nullable()
    .openapi({
      description: "Link of each feature in an email, {feature_id} replaced by the feature's id; null: no links",
      example: "https://lumen.example/feedback/{feature_id}",
    }),
  changelog_url: z
    .string()
    .max(2048)
    .refine((value) => isTemplateUrl(value, RELEASE_SLUG_PLACEHOLDER), { message: "must be an http(s) URL containing {release_slug}" })
    .nullable()
    .openapi({
      description:
        "The public page of a release, {release_slug} replaced by the release's slug: where changelog feed entries " +
        "and shipped emails link; null: no release links",
      example: "https://lumen.example/changelog/{release_slug}",
    }),
};

/**
 * `template` (a board_url or changelog_url) with `placeholder` replaced by `value`
 * (percent-encoded), or undefined when there is no template or the result is no URL.
 */
export function fillTemplateUrl(template: string | null | undefined, placeholder: string, value: string | number): string | undefined {
  if (!template) return undefined;
  const link = template.replaceAll(placeholder, encodeURIComponent(String(value)));
  return URL.canParse(link) ? link : undefined;
}

/**
 * The message of the cross-field rule: email_enabled true while from_address is null (422
 * naming `notifications.from_address`).
 */
export const FROM_ADDRESS_REQUIRED = "required while email_enabled is true";
