/**
 * Kysely table interfaces: the `Database` type every repository query is checked against.
 * Mirrors db/migrations; timestamps are `Date` on read and `Date | string` (RFC 3339) on write.
 */
import type { ColumnType, Generated } from "kysely";

type TimestampDefault = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Json<T> = ColumnType<T, string | T, string | T>;

/** Project display and behaviour settings (snapshot `project.settings`). */
export interface ProjectSettings {
  allow_comments: boolean;
  allow_suggestions: boolean;
  allow_voting: boolean;
  allow_likes: boolean;
  default_mode: string;
  score_is_weighted: boolean;
  show_archived: boolean;
  show_comments: boolean;
  show_denied: boolean;
  show_progress: boolean;
  show_views: boolean;
  show_votes: boolean;
}

/** The owner's `notifications` settings as stored; `from_name` null: the project's name. */
export interface NotificationSettings {
  email_enabled: boolean;
  from_name: string | null;
  from_address: string | null;
  reply_to: string | null;
  /** 0 to 1440; 0 sends each notification on its own. */
  digest_minutes: number;
  /** An http(s) URL holding `{feature_id}`, or null. */
  board_url: string | null;
  /** An http(s) URL holding `{release_slug}`, or null; absent (null) in rows stored before it existed. */
  changelog_url?: string | null;
}

export interface ThemeColors {
  accent: string;
  background: string;
  border: string;
  card_background: string;
  text: string;
  text_secondary: string;
}

export interface ProjectTheme {
  font: string;
  radius: string;
  light: ThemeColors;
  dark: ThemeColors;
}

export interface ProjectsTable {
  id: Generated<number>;
  slug: string;
  name: string;
  description: string | null;
  logo_url: string | null;
  banner_url: string | null;
  currency_symbol: Generated<string>;
  show_branding: Generated<boolean>;
  is_private: Generated<boolean>;
  plan: Generated<string>;
  sso_secret: string | null;
  /** Billing webhook signing secrets, write-only (owner-api-v3.md, "Billing sync"). */
  stripe_webhook_secret: string | null;
  paddle_webhook_secret: string | null;
  allowed_origins: Generated<string[]>;
  settings: Json<ProjectSettings>;
  theme: Json<ProjectTheme>;
  /** The owner's `notifications` settings (engagement-api-v3.md, "Email notifications"). */
  notification_settings: ColumnType<NotificationSettings, string | undefined, string>;
  created_at: TimestampDefault;
  updated_at: TimestampDefault;
}

/**
 * A project's voter count (voters with at least one vote), split over VOTER_COUNT_SHARDS rows so
 * first votes do not queue on one row; the count is the sum (migration 2026-11-23T01).
 */
export interface ProjectVoterCountsTable {
  project_id: number;
  /** voter_id % VOTER_COUNT_SHARDS of the voters counted here. */
  shard: number;
  voter_count: number;
}

/** Rows per project in project_voter_counts (fixed by the table's CHECK constraint). */
export const VOTER_COUNT_SHARDS = 16;

export interface ApiKeysTable {
  id: Generated<number>;
  project_id: number;
  kind: "secret" | "embed";
  key_hash: string;
  /** Last 4 characters of the key, kept when it is made; null for keys made before 2026-11-23T11 or restored from a digest. */
  hint: string | null;
  created_at: TimestampDefault;
}

export interface BoardsTable {
  id: Generated<number>;
  project_id: number;
  kind: "roadmap" | "custom";
  name: string;
  slug: string;
  position: Generated<number>;
}

export interface ColumnsTable {
  id: Generated<number>;
  project_id: number;
  board_id: number;
  name: string;
  color: string | null;
  position: Generated<number>;
  is_votable: Generated<boolean>;
  status: string | null;
}

export interface TagsTable {
  id: Generated<number>;
  project_id: number;
  name: string;
}

export interface TiersTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  mrr_cents: number;
  multiplier: Generated<number>;
  /** Billing systems' price ids mapped to this tier (unique per project across tiers). */
  stripe_price_ids: Generated<string[]>;
  paddle_price_ids: Generated<string[]>;
}

export interface VotersTable {
  id: Generated<number>;
  public_id: string;
  project_id: number;
  kind: "anonymous" | "sso";
  anon_token_hash: string | null;
  sso_id: string | null;
  display_name: string;
  email: string | null;
  role: "owner" | "editor" | "viewer" | null;
  banned: Generated<boolean>;
  company: string | null;
  tier_id: number | null;
  mrr_override_cents: number | null;
  stripe_customer_id: string | null;
  paddle_customer_id: string | null;
  subscription_id: string | null;
  subscription_status: string | null;
  subscribed_at: NullableTimestamp;
  trial_ends_at: NullableTimestamp;
  canceled_at: NullableTimestamp;
  last_synced_at: NullableTimestamp;
  churned: Generated<boolean>;
  churned_at: NullableTimestamp;
  churn_source: string | null;
  vote_count: Generated<number>;
  /** Unsubscribed from the project's emails (engagement-api-v3.md, "Unsubscribe"). */
  email_unsubscribed: Generated<boolean>;
  created_at: TimestampDefault;
  updated_at: TimestampDefault;
}

export interface FeaturesTable {
  id: Generated<number>;
  project_id: number;
  board_id: number;
  column_id: number | null;
  status: string;
  heading: string;
  description: string | null;
  author_voter_id: number | null;
  is_approved: Generated<boolean>;
  is_pinned: Generated<boolean>;
  position: Generated<number>;
  progress: number | null;
  view_count: Generated<number>;
  effort: number | null;
  developer_response: string | null;
  response_is_denial: Generated<boolean>;
  linked_feature_id: number | null;
  start_date: NullableTimestamp;
  target_date: NullableTimestamp;
  vote_count: Generated<number>;
  weighted_score: Generated<number>;
  /** ln of the sum of exp(vote age in decay units); see src/lib/rules/trending.ts. */
  trending_score: number | null;
  comment_count: Generated<number>;
  /**
   * The highest vote_count threshold feature.vote_milestone has announced (or the feature had
   * passed when it arrived): 0, 10, 25, 50, 100, 250, 500, 1000, 2000... (migration 2026-11-23T12-10).
   */
  vote_milestone: Generated<number>;
  created_at: TimestampDefault;
  updated_at: TimestampDefault;
}

export interface FeatureTagsTable {
  feature_id: number;
  tag_id: number;
}

export interface VotesTable {
  feature_id: number;
  voter_id: number;
  project_id: number;
  weight: Generated<number>;
  created_at: TimestampDefault;
}

/**
 * Per (feature, tier): what the feature's voters currently on that tier add up to, kept exact by
 * triggers (migration 2026-11-22T22-00-00-revenue-aggregates). The tier's amount and multiplier
 * are joined at read time.
 */
/**
 * The trigram search text of a feature, lower(heading || ' ' || description), kept by a trigger
 * (migration 2026-11-23T00-00-00): outside `features` so that counter updates leave its index alone.
 */
export interface FeatureSearchTable {
  feature_id: number;
  search_text: ColumnType<string, never, never>;
}

/**
 * What similar-feature search reads per feature (migration 2026-11-25T02-20-00), kept by a
 * trigger on features: the normalized heading, its English lexemes and their sorted key, the
 * description's lexemes, and the one-deletion typo keys.
 */
export interface FeatureSimilarityTable {
  feature_id: number;
  project_id: number;
  heading_norm: ColumnType<string, never, never>;
  word_key: ColumnType<string, never, never>;
  heading_words: ColumnType<string[], never, never>;
  description_words: ColumnType<string[], never, never>;
  typo_keys: ColumnType<number[], never, never>;
}

/**
 * One row per English lexeme of a feature's heading (migration 2026-11-25T02-20-00), kept with
 * feature_similarity: similar-feature search reads the features sharing a word with q, those
 * with the fewest heading lexemes (heading_size) first.
 */
export interface FeatureSimilarityPostingsTable {
  project_id: number;
  word: string;
  heading_size: number;
  feature_id: number;
}

export interface FeatureTierVotesTable {
  feature_id: number;
  tier_id: number;
  project_id: number;
  /** Voters of the tier who voted on the feature. */
  votes: Generated<number>;
  /** Of those, voters who churned. */
  churned: Generated<number>;
  /** Of those, voters not churned and without an override: each pays the tier's mrr_cents. */
  billed: Generated<number>;
  /** Sum of the overrides of voters not churned with an override (bigint: a string from postgres.js). */
  override_cents: ColumnType<string | number, number | undefined, number>;
}

export interface CommentsTable {
  id: Generated<number>;
  project_id: number;
  feature_id: number;
  parent_id: number | null;
  voter_id: number;
  content: string;
  like_count: Generated<number>;
  created_at: TimestampDefault;
}

export interface CommentLikesTable {
  comment_id: number;
  voter_id: number;
  created_at: TimestampDefault;
}

export interface ReleasesTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  slug: string;
  body: string | null;
  body_html: string | null;
  is_featured: Generated<boolean>;
  published_at: NullableTimestamp;
  view_count: Generated<number>;
  /** release.published is recorded for the current publication (migration 2026-11-23T12-10). */
  publication_recorded: Generated<boolean>;
  created_at: TimestampDefault;
}

export interface ReleaseFeaturesTable {
  release_id: number;
  feature_id: number;
  changelog_type: "new" | "improvement" | "fix" | "security" | "breaking_change";
  position: Generated<number>;
}

export interface MessagesTable {
  id: Generated<number>;
  project_id: number;
  title: string;
  body: string;
  kind: Generated<string>;
  presentation: Generated<string>;
  priority: Generated<number>;
  action_label: string | null;
  action_url: string | null;
  is_dismissible: Generated<boolean>;
  platforms: string[] | null;
  min_app_version: string | null;
  max_app_version: string | null;
  starts_at: NullableTimestamp;
  ends_at: NullableTimestamp;
  created_at: TimestampDefault;
  updated_at: TimestampDefault;
}

export interface MessageDismissalsTable {
  message_id: number;
  voter_id: number;
  created_at: TimestampDefault;
}

/** One merged duplicate while it stays merged (migration 2026-11-23T10-00-00, owner Rule 2). */
export interface FeatureMergesTable {
  id: Generated<number>;
  project_id: number;
  /** The duplicate (unique: a feature is merged at most once at a time). */
  source_id: number;
  target_id: number;
  previous_status: string;
  previous_column_id: number | null;
  previous_linked_feature_id: number | null;
  /** Whether the merge changed linked_feature (unmerge then puts the previous one back). */
  linked_set_by_merge: boolean;
  created_at: TimestampDefault;
}

/** A vote the duplicate had when merged: moved to the target, or dropped as a duplicate. */
export interface FeatureMergeVotesTable {
  merge_id: number;
  voter_id: number;
  kind: "moved" | "duplicate";
  /** The duplicate's vote. */
  weight: number;
  created_at: ColumnType<Date, Date | string, Date | string>;
  /** The target vote's own weight and time when the merge replaced them by the earlier vote's. */
  target_weight: number | null;
  target_created_at: NullableTimestamp;
}

/** Outbox of events (migration 2026-11-23T12-00-00-events; src/events/outbox.ts). */
export interface EventsTable {
  seq: Generated<string>;
  /** xid8 of the inserting transaction, as a decimal string. */
  txid: Generated<string>;
  project_id: number;
  type: string;
  data: ColumnType<EventData, string, string>;
  created_at: Generated<Date>;
  /**
   * Internal id of the voter whose personal data the object carries (voter.*: the voter;
   * comment.*: the author), null for other events: what an erasure scrubs (src/events/erasure.ts).
   */
  subject_voter_id: number | null;
}

/** The `data` of an EventObject: the object after the change and, for updates, what changed. */
export interface EventData {
  object: Record<string, unknown>;
  changes: Record<string, { from: unknown; to: unknown }> | null;
}

/** Billing events a project applied or skipped (migration 2026-11-23T12-30-00-billing-sync). */
export interface BillingEventsTable {
  project_id: number;
  system: BillingSystem;
  /** The vendor's event id (Stripe `evt_...`, Paddle `evt_...`). */
  event_id: string;
  event_type: string;
  occurred_at: ColumnType<Date, Date | string, Date | string>;
  processed_at: TimestampDefault;
}

/** Per subscription, the time of the last billing event applied to it (out-of-order guard). */
export interface BillingSubscriptionsTable {
  project_id: number;
  system: BillingSystem;
  subscription_id: string;
  last_event_at: NullableTimestamp;
  last_event_id: string | null;
}

/** The two billing systems of owner-api-v3.md, "Billing sync". */
export type BillingSystem = "stripe" | "paddle";

/** A project's webhook (migration 2026-11-23T12-20-00-webhooks; src/events/). */
export interface WebhooksTable {
  id: Generated<number>;
  project_id: number;
  url: string;
  /** Event types delivered; empty: every type. */
  events: ColumnType<string[], string[] | undefined, string[]>;
  description: string | null;
  enabled: Generated<boolean>;
  disabled_reason: "gone" | "failing" | null;
  /** Signs deliveries; write-only on the API (returned by create and rotate-secret only). */
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: NullableTimestamp;
  consecutive_failures: Generated<number>;
  created_at: TimestampDefault;
}

/** One event for one webhook, with its attempts' outcome (src/events/deliveries.repository.ts). */
export interface WebhookDeliveriesTable {
  /** bigint, as a decimal string. */
  id: Generated<string>;
  webhook_id: number;
  event_id: string;
  event_type: string;
  /** The events row (seq) delivered, whose EventObject is built at each attempt; null for a ping. */
  event_seq: string | null;
  status: ColumnType<
    "pending" | "succeeded" | "failed",
    "pending" | "succeeded" | "failed" | undefined,
    "pending" | "succeeded" | "failed"
  >;
  attempts: Generated<number>;
  last_status_code: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
  /** When the row is due (or its claim's lease ends); null when not due (paused, or final). */
  next_attempt_at: NullableTimestamp;
  claim_token: string | null;
  created_at: TimestampDefault;
}

/** Where the dispatcher stands in the event feed: one row (id 1). */
export interface WebhookDispatchCursorTable {
  id: number;
  /** xid8, as a decimal string. */
  txid: string;
  /** bigint, as a decimal string. */
  seq: string;
}

/** Reasons a voter follows a feature (engagement-api-v3.md, SubscriptionObject). */
export type SubscriptionReason = "author" | "vote" | "comment" | "manual" | "merge";

/** A voter's subscription to a feature, or their opt-out (migration 2026-11-25T02-00-00-engagement). */
export interface SubscriptionsTable {
  feature_id: number;
  voter_id: number;
  project_id: number;
  reason: SubscriptionReason;
  /** A DELETE's opt-out: not subscribed, and votes and comments do not subscribe again. */
  opted_out: Generated<boolean>;
  created_at: TimestampDefault;
}

/** One inbox entry (engagement-api-v3.md, NotificationObject); unique per (event_seq, type, voter_id). */
export interface NotificationsTable {
  /** bigint, as a decimal string. */
  id: Generated<string>;
  project_id: number;
  voter_id: number;
  feature_id: number;
  /** The events row (seq) it was made from, as a decimal string. */
  event_seq: string;
  type: string;
  data: Json<Record<string, unknown>>;
  read_at: NullableTimestamp;
  created_at: TimestampDefault;
  /** Where it stands in the email pipeline (migration 2026-11-25T02-10-00-emails). */
  email_state: Generated<"new" | "skipped" | "queued">;
}

/** Where the notification consumer stands in the event feed: one row (id 1). */
export interface NotificationCursorTable {
  id: number;
  /** xid8, as a decimal string. */
  txid: string;
  /** bigint, as a decimal string. */
  seq: string;
}

/** One email of the owner's log (engagement-api-v3.md, EmailObject; migration 2026-11-25T02-10-00-emails). */
export interface EmailsTable {
  /** bigint, as a decimal string. */
  id: Generated<string>;
  project_id: number;
  voter_id: number;
  to_address: string;
  subject: string;
  /** notifications.id values, as decimal strings. */
  notification_ids: ColumnType<string[], string[], string[]>;
  status: Generated<"pending" | "sent" | "failed">;
  attempts: Generated<number>;
  last_error: string | null;
  /** When a pending email is next due; while claimed, the end of the claim's lease. */
  next_attempt_at: TimestampDefault;
  claim_token: string | null;
  message_id: string;
  sent_at: NullableTimestamp;
  created_at: TimestampDefault;
}

/** Secrets every instance shares (migration 2026-11-25T02-10-00-emails): `unsubscribe`. */
export interface ServiceSecretsTable {
  name: string;
  secret: string;
}

/** The record kinds an import remembers by source id (imports-v3.md, "How an import runs" rule 4). */
export type ImportSourceKind = "board" | "tag" | "voter" | "feature" | "vote" | "comment" | "release";

/**
 * What an import made, by the source's own id (migration 2026-12-07T20-00-00): target_id the row
 * made (a vote: its feature, target_voter_id its voter). Kept when the target is deleted: the
 * tombstone that keeps a re-run from bringing it back. Voters have a row only when an import
 * made them (what makes them claimable by an SSO token's email).
 */
export interface ImportSourcesTable {
  project_id: number;
  source: "canny" | "fider" | "csv";
  kind: ImportSourceKind;
  source_id: string;
  target_id: number;
  target_voter_id: number | null;
}

export interface Database {
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  boards: BoardsTable;
  columns: ColumnsTable;
  tags: TagsTable;
  tiers: TiersTable;
  voters: VotersTable;
  features: FeaturesTable;
  feature_tags: FeatureTagsTable;
  votes: VotesTable;
  feature_tier_votes: FeatureTierVotesTable;
  feature_search: FeatureSearchTable;
  feature_similarity: FeatureSimilarityTable;
  feature_similarity_postings: FeatureSimilarityPostingsTable;
  project_voter_counts: ProjectVoterCountsTable;
  comments: CommentsTable;
  comment_likes: CommentLikesTable;
  releases: ReleasesTable;
  release_features: ReleaseFeaturesTable;
  messages: MessagesTable;
  message_dismissals: MessageDismissalsTable;
  feature_merges: FeatureMergesTable;
  feature_merge_votes: FeatureMergeVotesTable;
  events: EventsTable;
  billing_events: BillingEventsTable;
  billing_subscriptions: BillingSubscriptionsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_dispatch_cursor: WebhookDispatchCursorTable;
  subscriptions: SubscriptionsTable;
  notifications: NotificationsTable;
  notification_cursor: NotificationCursorTable;
  emails: EmailsTable;
  service_secrets: ServiceSecretsTable;
  import_sources: ImportSourcesTable;
  imports: ImportsTable;
  import_files: ImportFilesTable;
}

/** An import job (imports-v3.md, ImportObject); see db/migrations/2026-12-07T21-00-00-imports.ts. */
export interface ImportsTable {
  /** Public id: `imp_` + 16 random bytes in base64url. */
  id: string;
  project_id: number;
  source: string;
  dry_run: boolean;
  status: ColumnType<ImportStatus, ImportStatus | undefined, ImportStatus>;
  /** `{boards, status_map}` as in force. */
  options: ColumnType<{ boards: "roadmap" | "custom"; status_map: Record<string, string> }, string, string>;
  progress_done: Generated<number>;
  progress_total: number | null;
  /** Per kind `{created, updated, skipped}`; null until the job ends. */
  counts: ColumnType<
    Record<string, { created: number; updated: number; skipped: number }> | null,
    string | null | undefined,
    string | null
  >;
  /** The first 1,000 `{path, message}`. */
  warnings: ColumnType<Array<{ path: string; message: string }>, string | undefined, string>;
  warning_count: Generated<number>;
  /** The Error object `{code, field, message}` of a failed job. */
  error: ColumnType<{ code: string; field: string | null; message: string } | null, string | null | undefined, string | null>;
  attempts: Generated<number>;
  lease_owner: string | null;
  lease_until: NullableTimestamp;
  created_at: TimestampDefault;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
  /** bigint, as a decimal string: creation order. */
  seq: Generated<string>;
}

export type ImportStatus = "queued" | "running" | "succeeded" | "failed";

/** The export of an import until the job ends. */
export interface ImportFilesTable {
  import_id: string;
  file_name: string | null;
  bytes: Uint8Array;
}
