/**
 * The closed and extensible value sets the contracts name: feature statuses and changelog types
 * (feedback-board-api-v3.md, "Resources and their fields"; project-snapshot.md), message kinds,
 * presentations and platforms, and the event types (owner-api-v3.md, "Events"; imports-v3.md adds import.completed).
 */

export const FEATURE_STATUSES = ["open", "planned", "in_progress", "done", "denied", "archived"] as const;
export const CHANGELOG_TYPES = ["new", "improvement", "fix", "security", "breaking_change"] as const;
/** MessageObject.kind (contract: may gain members) and presentation (closed). */
export const MESSAGE_KINDS = ["info", "warning", "critical"] as const;
export const MESSAGE_PRESENTATIONS = ["banner", "alert"] as const;
export const MESSAGE_PLATFORMS = ["ios", "macos", "web"] as const;

/** Event types of owner-api-v3.md, "Events" (`ping` is sent by POST /webhooks/{id}/test only). */
export const EVENT_TYPES = [
  "feature.created",
  "feature.updated",
  "feature.status_changed",
  "feature.approved",
  "feature.merged",
  "feature.unmerged",
  "feature.deleted",
  "feature.vote_milestone",
  "vote.created",
  "vote.deleted",
  "comment.created",
  "comment.deleted",
  "release.published",
  "voter.banned",
  "voter.unbanned",
  "voter.deleted",
  "voter.billing_changed",
  "import.completed",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** NotificationObject.type (engagement-api-v3.md, "Notifications"; clients must tolerate added members). */
export const NOTIFICATION_TYPES = ["status_changed", "responded", "shipped", "merged", "replied", "team_commented"] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];
/** Why a voter follows a feature (engagement-api-v3.md, SubscriptionObject.reason; may grow). */
export const SUBSCRIPTION_REASONS = ["author", "vote", "comment", "manual", "merge"] as const;
