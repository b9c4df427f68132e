/**
 * NotificationObject, the unread count and the read body and answer of engagement-api-v3.md,
 * "Notifications (in-app inbox)".
 */
import { z } from "@hono/zod-openapi";
import { NOTIFICATION_TYPES } from "../../contract/enums.ts";
import { extensibleEnum } from "../../contract/params.ts";
import { FeatureRef } from "../../contract/schemas.ts";

/** Ids a read body may name at once. */
export const MAX_READ_IDS = 100;

export const NotificationObject = z
  .object({
    id: z.string().openapi({ description: "Notification id: ntf_ followed by digits", example: "ntf_1042" }),
    type: extensibleEnum(
      NOTIFICATION_TYPES,
      "What happened: status_changed, responded, shipped, merged, replied, team_commented; tolerate additions",
      "status_changed",
    ),
    /** The feature it is about, as it is now. */
    feature: FeatureRef,
    data: z.record(z.string(), z.unknown()).openapi({
      description:
        "By type: status_changed {from, to} (statuses); responded {developer_response, response_is_denial}; " +
        "shipped {release: ReleaseRef}; merged {into: FeatureRef}; replied {comment_id, parent_id, author_name, excerpt}; " +
        "team_commented {comment_id, author_name, excerpt}. excerpt: the first 280 Unicode code points of the comment",
      example: { from: "planned", to: "in_progress" },
    }),
    read: z.boolean().openapi({ description: "Whether the voter marked it read", example: false }),
    created_at: z
      .string()
      .openapi({ description: "When the change it reports was made, RFC 3339 UTC", example: "2026-11-20T09:30:00.000Z" }),
  })
  .openapi("NotificationObject");
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
