/**
 * NotificationObject, the unread count and the read body and answer of engagement-api-v3.md,
 * "Notifications (in-app inbox)".
 */
import { z } from "@hono/zod-openapi";
import { NOTIFICATION_TYPES, type NotificationType } from "../../contract/enums.ts";
import { FeatureRef, ReleaseRef } from "../../contract/schemas.ts";

/** Ids a read body may name at once. */
export const MAX_READ_IDS = 100;

const commentFields = {
  comment_id: z.number().int().openapi({ description: "The comment", example: 310 }),
  author_name: z
    .string()
    .nullable()
    .openapi({ description: "The comment author's display name; null when they have none", example: "Lumen team" }),
  excerpt: z.string().openapi({ description: "The first 280 Unicode code points of the comment", example: "Thanks, this ships next week" }),
};

/**
 * Each type's `data` (engagement-api-v3.md, "Notifications (in-app inbox)", the table): what the
 * notification consumer (src/events/notification-consumer.ts) records for that type.
 */
const NOTIFICATION_DATA = {
  status_changed: z
    .object({
      from: z.string().openapi({ description: "Status before the change", example: "planned" }),
      to: z.string().openapi({ description: "Status after the change", example: "in_progress" }),
    })
    .openapi({ description: "status_changed: the statuses before and after" }),
  responded: z
    .object({
      developer_response: z.string().openapi({ description: "The team's response", example: "Planned for 1.5" }),
      response_is_denial: z.boolean().openapi({ description: "Whether the response refuses the feature", example: false }),
    })
    .openapi({ description: "responded: the developer response given" }),
  shipped: z.object({ release: ReleaseRef }).openapi({ description: "shipped: the release that ships the feature" }),
  merged: z.object({ into: FeatureRef }).openapi({ description: "merged: the feature it was merged into" }),
  replied: z
    .object({
      comment_id: commentFields.comment_id,
      parent_id: z.number().int().openapi({ description: "The voter's comment replied to", example: 305 }),
      author_name: commentFields.author_name,
      excerpt: commentFields.excerpt,
    })
    .openapi({ description: "replied: a reply to the voter's comment" }),
  team_commented: z.object(commentFields).openapi({ description: "team_commented: a comment by the owner or an editor" }),
} as const;

const SCHEMA_NAMES: Record<NotificationType, string> = {
  status_changed: "StatusChangedNotification",
  responded: "RespondedNotification",
  shipped: "ShippedNotification",
  merged: "MergedNotification",
  replied: "RepliedNotification",
  team_commented: "TeamCommentedNotification",
};

function notificationSchema<T extends NotificationType>(type: T) {
  return z
    .object({
      id: z.string().openapi({ description: "Notification id: ntf_ followed by digits", example: "ntf_1042" }),
      type: z.literal(type).openapi({ description: "What happened (engagement-api-v3.md, Notifications table)" }),
      /** The feature it is about, as it is now. */
      feature: FeatureRef,
      data: NOTIFICATION_DATA[type] as (typeof NOTIFICATION_DATA)[T],
      read: z.boolean().openapi({ description: "Whether the voter marked it read", example: false }),
      created_at: z
        .string()
        .openapi({ description: "When the change it reports was made, RFC 3339 UTC", example: "2026-11-20T09:30:00.000Z" }),
    })
    .openapi(SCHEMA_NAMES[type]);
}

const [firstNotification, ...otherNotifications] = NOTIFICATION_TYPES.map((type) => notificationSchema(type));

/**
 * A notification of the inbox: one of the types' schemas, told apart by `type`, so a typed client
 * narrowing on `type` gets that type's `data`. Clients tolerate types added later (enums.ts).
 */
export const NotificationObject = z.discriminatedUnion("type", [firstNotification!, ...otherNotifications]).openapi("NotificationObject", {
  description:
    "A notification; `type` (status_changed, responded, shipped, merged, replied, team_commented; tolerate additions) tells what data is",
});
export type NotificationObject = z.infer<typeof NotificationObject>;

export const UnreadCountObject = z
  .object({
    unread_count: z.number().int().openapi({ description: "The voter's unread notifications in this project", example: 3 }),
  })
  .openapi("UnreadCountObject");
export type UnreadCountObject = z.infer<typeof UnreadCountObject>;

/**
 * `{ids}` (1 to 100 notification ids) or `{all: true}`, exactly one of them; anything else is 422
 * validation_failed naming `ids`.
 */
export const NotificationReadBody = z
  .object({
    ids: z
      .array(z.string().max(200))
      .min(1)
      .max(MAX_READ_IDS)
      .optional()
      .openapi({
        description: "1 to 100 notification ids to mark read; ids that are not the voter's own unread notifications are ignored",
        example: ["ntf_1042", "ntf_1043"],
      }),
    all: z.boolean().optional().openapi({ description: "true marks every notification of the voter read", example: true }),
  })
  .superRefine((body, ctx) => {
    const byIds = body.ids !== undefined;
    const byAll = body.all === true;
    if (byIds && byAll) ctx.addIssue({ code: "custom", path: ["ids"], message: "send either ids or all: true, not both" });
    else if (!byIds && !byAll) ctx.addIssue({ code: "custom", path: ["ids"], message: "send ids (1 to 100) or all: true" });
  })
  .openapi("NotificationReadBody");
export type NotificationReadBody = z.infer<typeof NotificationReadBody>;

export const NotificationsReadObject = z
  .object({
    updated: z.number().int().openapi({ description: "How many notifications went from unread to read", example: 2 }),
  })
  .openapi("NotificationsReadObject");
export type NotificationsReadObject = z.infer<typeof NotificationsReadObject>;
