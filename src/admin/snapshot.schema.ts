/**
 * Shape of a project snapshot (spec/project-snapshot.md, "Document"), format
 * "feedback-board-snapshot/1". This schema checks shapes and fills every default the spec gives;
 * rules that span objects (refs, one roadmap, parents, duplicates) live in snapshot-references.ts and snapshot-rules.ts.
 *
 * Unknown keys are dropped rather than refused: files come from other tools and a stray key
 * must not make an otherwise valid backup unloadable.
 */
import semver from "semver";
import { z } from "zod";

export const SNAPSHOT_FORMAT = "feedback-board-snapshot/1";

export const FEATURE_STATUSES = ["open", "planned", "in_progress", "done", "denied", "archived"] as const;
export const CHANGELOG_TYPES = ["new", "improvement", "fix", "security", "breaking_change"] as const;
export const MESSAGE_PLATFORMS = ["ios", "macos", "web"] as const;
export const PROJECT_SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** Keys are taken as given: 20..200 printable ASCII characters (space included). */
export const KEY_PATTERN = /^[\x20-\x7e]{20,200}$/;

const timestamp = z.iso.datetime({ offset: true, message: "must be an RFC 3339 timestamp" });
const optionalTimestamp = timestamp.nullable().default(null);
const nullableText = z.string().nullable().default(null);
const ref = z.string().min(1, "ref must not be empty");
const cents = z.number().int("must be integer cents").min(0, "must not be negative");
const count = z.number().int().min(0);
const version = z
  .string()
  .refine((value) => semver.valid(value) !== null, { message: "must be a valid semver version (e.g. 1.4.0)" })
  .nullable()
  .default(null);

const settingsSchema = z.object({
  allow_comments: z.boolean().default(true),
  allow_suggestions: z.boolean().default(true),
  allow_voting: z.boolean().default(true),
  allow_likes: z.boolean().default(true),
  default_mode: z.string().default("roadmap"),
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
      accent: z.string().default(defaults.accent),
      background: z.string().default(defaults.background),
      border: z.string().default(defaults.border),
      card_background: z.string().default(defaults.card_background),
      text: z.string().default(defaults.text),
      text_secondary: z.string().default(defaults.text_secondary),
    })
    .prefault({});
}

const themeSchema = z.object({
  font: z.string().default("Inter"),
  radius: z.string().default("8px"),
  light: colors({
    accent: "#4f46e5", background: "#ffffff", border: "#e5e7eb",
    card_background: "#f9fafb", text: "#111827", text_secondary: "#6b7280",
  }),
  dark: colors({
    accent: "#818cf8", background: "#111827", border: "#374151",
    card_background: "#1f2937", text: "#f9fafb", text_secondary: "#9ca3af",
  }),
});

const projectSchema = z.object({
  slug: z.string().regex(PROJECT_SLUG_PATTERN, "must match ^[a-z0-9][a-z0-9-]{0,62}$"),
  name: z.string().min(1),
  description: nullableText,
  logo_url: nullableText,
  banner_url: nullableText,
  currency_symbol: z.string().default("$"),
  show_branding: z.boolean().default(true),
  is_private: z.boolean().default(false),
  plan: z.string().default("pro"),
  sso_secret: nullableText,
  allowed_origins: z.array(z.string()).default([]),
  settings: settingsSchema.prefault({}),
  theme: themeSchema.prefault({}),
});

const keySchema = z.object({
  kind: z.enum(["secret", "embed"]),
  key: z.string().regex(KEY_PATTERN, "must be 20..200 printable ASCII characters"),
});

const tagSchema = z.object({ ref, name: z.string().min(1) });

const tierSchema = z.object({
  ref,
  name: z.string().min(1),
  mrr_cents: cents,
  multiplier: z.number().int("must be an integer").min(1, "must be at least 1").default(1),
});

const columnSchema = z.object({
  ref,
  name: z.string().min(1),
  color: nullableText,
  /** Default: the column's index in its board's list, so columns draw in file order. */
  position: z.number().int().nullable().default(null),
  is_votable: z.boolean().default(true),
  status: z.string().nullable().default(null),
});

const boardSchema = z.object({
  ref,
  kind: z.enum(["roadmap", "custom"]),
  name: z.string().min(1),
  /** Default: "roadmap" for the roadmap, the board's ref for a custom board. */
  slug: z.string().min(1).nullable().default(null),
  columns: z.array(columnSchema).default([]),
});

const voterSchema = z.object({
  ref,
  kind: z.enum(["anonymous", "sso"]).default("anonymous"),
  anon_token: nullableText,
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
  created_at: optionalTimestamp,
});

const featureSchema = z.object({
  ref,
  board: ref,
  column: ref.nullable().default(null),
  status: z.enum(FEATURE_STATUSES).nullable().default(null),
  heading: z.string().min(1, "must be 1..254 characters").max(254, "must be 1..254 characters"),
  description: z.string().max(2000, "must be at most 2000 characters").nullable().default(null),
  author: ref.nullable().default(null),
  is_approved: z.boolean().default(true),
  is_pinned: z.boolean().default(false),
  /** Default: the feature's index among the features of its board, i.e. file order. */
  position: z.number().int().nullable().default(null),
  progress: z.number().int().min(0).max(100).nullable().default(null),
  view_count: count.default(0),
  effort: z.number().int().nullable().default(null),
  developer_response: nullableText,
  response_is_denial: z.boolean().default(false),
  linked_feature: ref.nullable().default(null),
  tags: z.array(ref).default([]),
  start_date: optionalTimestamp,
  target_date: optionalTimestamp,
  created_at: optionalTimestamp,
  updated_at: optionalTimestamp,
});

const voteSchema = z.object({ voter: ref, feature: ref, created_at: optionalTimestamp });

const commentSchema = z.object({
  ref,
  feature: ref,
  voter: ref,
  parent: ref.nullable().default(null),
  content: z.string().min(1),
  created_at: optionalTimestamp,
});

const likeSchema = z.object({ voter: ref, comment: ref });

const releaseSchema = z.object({
  ref,
  name: z.string().min(1),
  /** Default: derived from the name ("Version 1.4" -> "version-1-4"). */
  slug: z.string().min(1).nullable().default(null),
  body: nullableText,
  is_featured: z.boolean().default(false),
  published_at: optionalTimestamp,
  view_count: count.default(0),
  features: z
    .array(z.object({ feature: ref, changelog_type: z.enum(CHANGELOG_TYPES).default("new") }))
    .default([]),
});

const messageSchema = z.object({
  ref,
  title: z.string().min(1),
  body: z.string(),
  kind: z.enum(["info", "warning", "critical"]).default("info"),
  presentation: z.enum(["banner", "alert"]).default("banner"),
  priority: z.number().int().default(0),
  action_label: nullableText,
  action_url: nullableText,
  is_dismissible: z.boolean().default(true),
  platforms: z.array(z.enum(MESSAGE_PLATFORMS)).min(1, "must name at least one platform, or be null for everybody").nullable().default(null),
  min_app_version: version,
  max_app_version: version,
  starts_at: optionalTimestamp,
  ends_at: optionalTimestamp,
  created_at: optionalTimestamp,
});

const dismissalSchema = z.object({ voter: ref, message: ref });

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
