/**
 * Shape of a project snapshot (docs/contract/project-snapshot.md, "Document"), format
 * "feedback-board-snapshot/1". This schema checks shapes and fills every default the spec gives;
 * rules that span objects (refs, one roadmap, parents, duplicates) live in snapshot-references.ts and snapshot-rules.ts.
 *
 * Unknown keys are dropped rather than refused: files come from other tools and a stray key
 * must not make an otherwise valid backup unloadable.
 *
 * Every bound the database schema has (db/migrations) is checked here too, so a file is refused
 * with a JSON path instead of a raw Postgres error: integers in their column's 32-bit range,
 * text without NUL or unpaired surrogates (Postgres refuses the first; the driver would silently
 * replace the second), timestamps Postgres accepts. The restore fields of the spec's "Restores"
 * section (ids, key and token digests) and of "Webhooks, merges and engagement" (webhooks, a
 * merged feature's `merge`) are optional.
 */
import semver from "semver";
import { z } from "zod";
import {
  CHANGELOG_TYPES,
  EVENT_TYPES,
  FEATURE_STATUSES,
  MESSAGE_KINDS,
  MESSAGE_PLATFORMS,
  MESSAGE_PRESENTATIONS,
  SUBSCRIPTION_REASONS,
} from "../contract/enums.ts";
import { FROM_ADDRESS_REQUIRED, NOTIFICATION_SETTINGS_DEFAULTS, notificationSettingsShape } from "../contract/notification-settings.ts";

export const SNAPSHOT_FORMAT = "feedback-board-snapshot/1";

export const PROJECT_SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** Keys are taken as given: 20..200 printable ASCII characters (space included). */
export const KEY_PATTERN = /^[\x20-\x7e]{20,200}$/;
/** A SHA-256 digest as stored for keys and anonymous tokens (spec, "Restores"). */
export const SHA256_PATTERN = /^[0-9a-f]{64}$/;
/** A voter_id as the API reports it (generated ones are "v_" + 22 base64url characters). */
export const VOTER_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Bounds of a Postgres integer (int4) column. */
export const INT4_MIN = -2_147_483_648;
export const INT4_MAX = 2_147_483_647;

const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Text Postgres stores exactly as given: no NUL character and no unpaired UTF-16 surrogate. */
export function isStorableText(value: string): boolean {
  return !value.includes("\u0000") && !UNPAIRED_SURROGATE.test(value);
}

/** Any string of a text column. */
const text = z.string().refine(isStorableText, { message: "must not contain NUL (\\u0000) or an unpaired surrogate" });

/** An integer of an int4 column, at least `min`. */
function int4(min = INT4_MIN, minMessage = `must be at least ${min}`, intMessage = "must be an integer") {
  return z.number().int(intMessage).min(min, minMessage).max(INT4_MAX, `must be at most ${INT4_MAX} (a 32-bit integer column)`);
}

// Postgres has no year 0000, an instant before 0001 (UTC) reads back as no valid JS date, and
// one after 9999 exports as "+010000-...", which is not RFC 3339: the instant stays in 0001..9999.
const FIRST_INSTANT = Date.parse("0001-01-01T00:00:00Z");
const LAST_INSTANT = Date.parse("9999-12-31T23:59:59.999Z");
const timestamp = z.iso.datetime({ offset: true, message: "must be an RFC 3339 timestamp" }).refine(
  (value) => {
    const instant = Date.parse(value);
    return instant >= FIRST_INSTANT && instant <= LAST_INSTANT;
  },
  { message: "must fall within the years 0001..9999 (UTC)" },
);
const optionalTimestamp = timestamp.nullable().default(null);
const nullableText = text.nullable().default(null);
const ref = text.min(1, "ref must not be empty");
const cents = int4(0, "must not be negative", "must be integer cents");
const count = int4(0);
/** The database id of a row (spec, "Restores"): kept by the import when given. */
const rowId = int4(1, "must be a positive id").optional();
const sha256 = z.string().regex(SHA256_PATTERN, "must be a SHA-256 digest: 64 lowercase hex digits");
const version = text
  .refine((value) => semver.valid(value) !== null, { message: "must be a valid semver version (e.g. 1.4.0)" })
  .nullable()
  .default(null);

const settingsSchema = z.object({
  allow_comments: z.boolean().default(true),
  allow_suggestions: z.boolean().default(true),
  allow_voting: z.boolean().default(true),
  allow_likes: z.boolean().default(true),
  default_mode: text.default("roadmap"),
  score_is_weighted: z.boolean().default(false),
  show_archived: z.boolean().default(false),
  show_comments: z.boolean().default(true),
  show_denied: z.boolean().default(true),
  show_progress: z.boolean().default(true),
  show_views: z.boolean().default(true),
  show_votes: z.boolean().default(true),
});

function colors(defaults: Record<"accent" | "background" | "border" | "card_background" | "text" | "text_secondary", string>) {
  return z
    .object({
      accent: text.default(defaults.accent),
      background: text.default(defaults.background),
      border: text.default(defaults.border),
      card_background: text.default(defaults.card_background),
      text: text.default(defaults.text),
      text_secondary: text.default(defaults.text_secondary),
    })
    .prefault({});
}

const themeSchema = z.object({
  font: text.default("Inter"),
  radius: text.default("8px"),
  light: colors({
    accent: "#4f46e5",
    background: "#ffffff",
    border: "#e5e7eb",
    card_background: "#f9fafb",
    text: "#111827",
    text_secondary: "#6b7280",
  }),
  dark: colors({
    accent: "#818cf8",
    background: "#111827",
    border: "#374151",
    card_background: "#1f2937",
    text: "#f9fafb",
    text_secondary: "#9ca3af",
  }),
});

/**
 * The owner's `notifications` settings (spec, "Webhooks, merges and engagement"), by the rules
 * PATCH /settings applies (src/contract/notification-settings.ts); from_name null: the project's name.
 */
const notificationsSchema = z
  .object({
    email_enabled: notificationSettingsShape.email_enabled.default(NOTIFICATION_SETTINGS_DEFAULTS.email_enabled),
    from_name: notificationSettingsShape.from_name.nullable().default(NOTIFICATION_SETTINGS_DEFAULTS.from_name),
    from_address: notificationSettingsShape.from_address.default(NOTIFICATION_SETTINGS_DEFAULTS.from_address),
    reply_to: notificationSettingsShape.reply_to.default(NOTIFICATION_SETTINGS_DEFAULTS.reply_to),
    digest_minutes: notificationSettingsShape.digest_minutes.default(NOTIFICATION_SETTINGS_DEFAULTS.digest_minutes),
    board_url: notificationSettingsShape.board_url.default(NOTIFICATION_SETTINGS_DEFAULTS.board_url),
    changelog_url: notificationSettingsShape.changelog_url.default(NOTIFICATION_SETTINGS_DEFAULTS.changelog_url),
  })
  .superRefine((settings, ctx) => {
    if (settings.email_enabled && settings.from_address === null) {
      ctx.addIssue({ code: "custom", path: ["from_address"], message: FROM_ADDRESS_REQUIRED });
    }
  });

const projectSchema = z.object({
  slug: z.string().regex(PROJECT_SLUG_PATTERN, "must match ^[a-z0-9][a-z0-9-]{0,62}$"),
  name: text.min(1),
  description: nullableText,
  logo_url: nullableText,
  banner_url: nullableText,
  currency_symbol: text.default("$"),
  show_branding: z.boolean().default(true),
  is_private: z.boolean().default(false),
  plan: text.default("pro"),
  sso_secret: nullableText,
  stripe_webhook_secret: nullableText,
  paddle_webhook_secret: nullableText,
  allowed_origins: z.array(text).default([]),
  settings: settingsSchema.prefault({}),
  theme: themeSchema.prefault({}),
  notifications: notificationsSchema.prefault({}),
});

/** A key in plaintext (`key`) or as its stored digest (`key_sha256`, spec "Restores"): exactly one. */
const keySchema = z
  .object({
    kind: z.enum(["secret", "embed"]),
    key: z.string().regex(KEY_PATTERN, "must be 20..200 printable ASCII characters").optional(),
    key_sha256: sha256.optional(),
  })
  .superRefine((key, ctx) => {
    if (key.key !== undefined && key.key_sha256 !== undefined) {
      ctx.addIssue({ code: "custom", path: ["key_sha256"], message: "give key or key_sha256, not both" });
    } else if (key.key === undefined && key.key_sha256 === undefined) {
      ctx.addIssue({ code: "custom", path: ["key"], message: "required (or key_sha256, the stored digest)" });
    }
  });

/**
 * Where an import got the record from (imports-v3.md, "How an import runs" rule 4): the source
 * and the source's own id, so a restored project is still safe to import into again.
 */
const importSourceSchema = z
  .object({ source: z.enum(["canny", "fider", "csv"]), id: text.min(1) })
  .strict()
  .nullable()
  .default(null);

const tagSchema = z.object({ ref, id: rowId, name: text.min(1), import_source: importSourceSchema });

const tierSchema = z.object({
  ref,
  id: rowId,
  name: text.min(1),
  mrr_cents: cents,
  multiplier: int4(1).default(1),
  /** Billing price ids mapped to the tier (owner-api-v3.md, "Billing sync"). */
  stripe_price_ids: z.array(text.min(1)).default([]),
  paddle_price_ids: z.array(text.min(1)).default([]),
});

const columnSchema = z.object({
  ref,
  id: rowId,
  name: text.min(1),
  color: nullableText,
  /** Default: the column's index in its board's list, so columns draw in file order. */
  position: int4().nullable().default(null),
  is_votable: z.boolean().default(true),
  status: text.nullable().default(null),
});

const boardSchema = z.object({
  ref,
  /**
   * Beyond the spec's list (docs/decisions.md): the API shows custom boards' ids (the roadmap is board 0),
   * and a write racing a restore may hold any board's row id.
   */
  id: rowId,
  kind: z.enum(["roadmap", "custom"]),
  name: text.min(1),
  /** Default: "roadmap" for the roadmap, the board's ref for a custom board. */
  slug: text.min(1).nullable().default(null),
  columns: z.array(columnSchema).default([]),
  import_source: importSourceSchema,
});

const voterSchema = z.object({
  ref,
  /** The voter_id the API reports (spec, "Restores"). */
  voter_id: z.string().regex(VOTER_ID_PATTERN, "must be 1..64 characters of A-Z a-z 0-9 _ -").optional(),
  kind: z.enum(["anonymous", "sso"]).default("anonymous"),
  anon_token: nullableText,
  /** The stored digest of the voter's anonymous token, instead of anon_token (spec, "Restores"). */
  anon_token_sha256: sha256.nullable().default(null),
  sso_id: nullableText,
  display_name: nullableText,
  email: nullableText,
  role: z.enum(["owner", "editor", "viewer"]).nullable().default(null),
  banned: z.boolean().default(false),
  company: nullableText,
  tier: ref.nullable().default(null),
  mrr_override_cents: cents.nullable().default(null),
  stripe_customer_id: nullableText,
  paddle_customer_id: nullableText,
  subscription_id: nullableText,
  subscription_status: nullableText,
  subscribed_at: optionalTimestamp,
  trial_ends_at: optionalTimestamp,
  canceled_at: optionalTimestamp,
  last_synced_at: optionalTimestamp,
  churned: z.boolean().default(false),
  churned_at: optionalTimestamp,
  churn_source: nullableText,
  /** Unsubscribed from the project's emails (engagement-api-v3.md, "Unsubscribe"). */
  email_unsubscribed: z.boolean().default(false),
  created_at: optionalTimestamp,
  import_source: importSourceSchema,
});

/**
 * What an unmerge needs of a merged feature (spec, "Webhooks, merges and engagement"; owner Rule
 * 2). Beyond the spec's fields (docs/decisions.md): `previous_linked_feature`, the duplicate link the feature
 * had before the merge (an unmerge puts it back when the merge replaced it), and
 * `kept_vote_times`, the cast times of the votes of kept voters that only the merge record holds,
 * so that an unmerge after a restore gives back votes with their times (trending) exactly.
 */
const mergeSchema = z.object({
  into: ref,
  previous_status: z.enum(FEATURE_STATUSES),
  previous_column: ref.nullable().default(null),
  moved_voters: z.array(ref).default([]),
  kept_voters: z.array(ref).default([]),
  previous_linked_feature: ref.nullable().default(null),
  kept_vote_times: z
    .array(
      z.object({
        voter: ref,
        /** When the duplicate's vote was cast: an unmerge puts it back on the duplicate with this time. */
        duplicate_created_at: timestamp,
        /** The target vote's own time when the merge gave it the duplicate's earlier one; else null. */
        target_created_at: optionalTimestamp,
      }),
    )
    .default([]),
});

const featureSchema = z.object({
  ref,
  id: rowId,
  board: ref,
  column: ref.nullable().default(null),
  status: z.enum(FEATURE_STATUSES).nullable().default(null),
  heading: text.min(1, "must be 1..254 characters").max(254, "must be 1..254 characters"),
  description: text.max(2000, "must be at most 2000 characters").nullable().default(null),
  author: ref.nullable().default(null),
  is_approved: z.boolean().default(true),
  is_pinned: z.boolean().default(false),
  /** Default: the feature's index among the features of its board, i.e. file order. */
  position: int4().nullable().default(null),
  progress: z.number().int("must be an integer").min(0, "must be 0..100").max(100, "must be 0..100").nullable().default(null),
  view_count: count.default(0),
  effort: int4().nullable().default(null),
  developer_response: nullableText,
  response_is_denial: z.boolean().default(false),
  linked_feature: ref.nullable().default(null),
  tags: z.array(ref).default([]),
  start_date: optionalTimestamp,
  target_date: optionalTimestamp,
  created_at: optionalTimestamp,
  updated_at: optionalTimestamp,
  /** Set on a merged duplicate (spec, "Webhooks, merges and engagement"). */
  merge: mergeSchema.nullable().default(null),
  import_source: importSourceSchema,
});

const voteSchema = z.object({ voter: ref, feature: ref, created_at: optionalTimestamp, import_source: importSourceSchema });

const commentSchema = z.object({
  ref,
  id: rowId,
  feature: ref,
  voter: ref,
  parent: ref.nullable().default(null),
  content: text.min(1),
  created_at: optionalTimestamp,
  import_source: importSourceSchema,
});

const likeSchema = z.object({ voter: ref, comment: ref });

const releaseSchema = z.object({
  ref,
  id: rowId,
  name: text.min(1),
  /** Default: derived from the name ("Version 1.4" -> "version-1-4"). */
  slug: text.min(1).nullable().default(null),
  body: nullableText,
  is_featured: z.boolean().default(false),
  published_at: optionalTimestamp,
  view_count: count.default(0),
  features: z.array(z.object({ feature: ref, changelog_type: z.enum(CHANGELOG_TYPES).default("new") })).default([]),
  import_source: importSourceSchema,
});

const messageSchema = z.object({
  ref,
  id: rowId,
  title: text.min(1),
  body: text,
  kind: z.enum(MESSAGE_KINDS).default("info"),
  presentation: z.enum(MESSAGE_PRESENTATIONS).default("banner"),
  priority: int4().default(0),
  action_label: nullableText,
  action_url: nullableText,
  is_dismissible: z.boolean().default(true),
  platforms: z
    .array(z.enum(MESSAGE_PLATFORMS))
    .min(1, "must name at least one platform, or be null for everybody")
    .nullable()
    .default(null),
  min_app_version: version,
  max_app_version: version,
  starts_at: optionalTimestamp,
  ends_at: optionalTimestamp,
  created_at: optionalTimestamp,
});

const dismissalSchema = z.object({ voter: ref, message: ref });

/**
 * A voter's subscription to a feature, or with `opted_out` their opt-out (spec, "Webhooks, merges
 * and engagement"; engagement-api-v3.md, "Subscriptions"). `created_at` default: import time.
 */
const subscriptionSchema = z.object({
  voter: ref,
  feature: ref,
  reason: z.enum(SUBSCRIPTION_REASONS),
  opted_out: z.boolean().default(false),
  created_at: optionalTimestamp,
});

/** A Standard Webhooks secret as the service makes them: `whsec_` + base64 of at least 24 bytes. */
export const WEBHOOK_SECRET_PATTERN = /^whsec_(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const webhookSecret = z
  .string()
  .regex(WEBHOOK_SECRET_PATTERN, "must be whsec_ followed by base64")
  .refine((value) => !WEBHOOK_SECRET_PATTERN.test(value) || Buffer.from(value.slice("whsec_".length), "base64").length >= 24, {
    message: "must encode at least 24 bytes",
  });
const knownEventTypes: ReadonlySet<string> = new Set(EVENT_TYPES);

/**
 * The owner's webhook (spec, "Webhooks, merges and engagement"; owner-api-v3.md, "Webhooks"), its
 * secrets as stored. `url` is checked by snapshot-rules.ts (checkWebhooks), as the owner route
 * checks its form. Beyond the spec's fields (docs/decisions.md): `previous_secret` and
 * `previous_secret_expires_at`, the secret a rotation replaced, which keeps signing until then.
 */
const webhookSchema = z.object({
  id: rowId,
  url: text.min(1, "must not be empty").max(2048, "must be at most 2048 characters"),
  events: z
    .array(
      z.string().refine((type) => knownEventTypes.has(type), { message: `unknown event type; known types: ${EVENT_TYPES.join(", ")}` }),
    )
    .default([]),
  description: text.max(500, "must be at most 500 characters").nullable().default(null),
  enabled: z.boolean().default(true),
  disabled_reason: z.enum(["gone", "failing"]).nullable().default(null),
  /** Default: a new secret (the owner reads it with rotate-secret). */
  secret: webhookSecret.optional(),
  previous_secret: webhookSecret.nullable().default(null),
  previous_secret_expires_at: optionalTimestamp,
  created_at: optionalTimestamp,
});

export const snapshotSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT, { message: `must be "${SNAPSHOT_FORMAT}"` }),
  project: projectSchema,
  keys: z.array(keySchema).default([]),
  tags: z.array(tagSchema).default([]),
  tiers: z.array(tierSchema).default([]),
  boards: z.array(boardSchema).default([]),
  voters: z.array(voterSchema).default([]),
  features: z.array(featureSchema).default([]),
  votes: z.array(voteSchema).default([]),
  comments: z.array(commentSchema).default([]),
  likes: z.array(likeSchema).default([]),
  releases: z.array(releaseSchema).default([]),
  messages: z.array(messageSchema).default([]),
  dismissals: z.array(dismissalSchema).default([]),
  webhooks: z.array(webhookSchema).default([]),
  subscriptions: z.array(subscriptionSchema).default([]),
});

/** A snapshot as written in a file: most keys optional. */
export type SnapshotInput = z.input<typeof snapshotSchema>;
/** A parsed snapshot: every default filled in. */
export type SnapshotDocument = z.output<typeof snapshotSchema>;
export type SnapshotProject = SnapshotDocument["project"];
export type SnapshotBoard = SnapshotDocument["boards"][number];
export type SnapshotColumn = SnapshotBoard["columns"][number];
export type SnapshotVoter = SnapshotDocument["voters"][number];
export type SnapshotFeature = SnapshotDocument["features"][number];
export type SnapshotComment = SnapshotDocument["comments"][number];
export type SnapshotRelease = SnapshotDocument["releases"][number];
export type SnapshotMessage = SnapshotDocument["messages"][number];
export type SnapshotMerge = NonNullable<SnapshotFeature["merge"]>;
export type SnapshotWebhook = SnapshotDocument["webhooks"][number];

/**
 * What `admin import` prints (spec, "Id map"): database ids by ref; the roadmap board is 0 and
 * voters are given by their public voter_id.
 */
export interface IdMap {
  project: { slug: string };
  ids: {
    boards: Record<string, number>;
    columns: Record<string, number>;
    tags: Record<string, number>;
    tiers: Record<string, number>;
    voters: Record<string, string>;
    features: Record<string, number>;
    comments: Record<string, number>;
    releases: Record<string, number>;
    messages: Record<string, number>;
  };
}
