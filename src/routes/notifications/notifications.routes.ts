/** Route definitions of the inbox (engagement-api-v3.md, "Notifications (in-app inbox)"). */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent, listEnvelopeOf, notModified } from "../../contract/envelope.ts";
import { readErrors, writeErrors } from "../../contract/errors.ts";
import { booleanParam, PageQuery, SlugParam } from "../../contract/params.ts";
import { describedRoute } from "../../contract/route-description.ts";
import { NotificationObject, NotificationReadBody, NotificationsReadObject, UnreadCountObject } from "./notifications.schemas.ts";

const params = z.object({ slug: SlugParam });

const NotificationsQuery = z.object({
  unread: booleanParam()
    .optional()
    .openapi({
      param: { name: "unread", in: "query" },
      description: "true: unread only; false: read only; omitted: all",
      example: true,
    }),
  ...PageQuery,
});

const identityNote =
  "Needs a voter identity (X-VF-Anon or X-VF-Token): 401 identity_required without one, identity_invalid for a bad one. " +
  "Only the voter's own notifications in this project. Cache-Control: private, max-age=0 (the inbox changes within seconds).";

export const listNotifications = createRoute(
  describedRoute(
    { kind: "read", voter: "required" },
    {
      method: "get",
      path: "/projects/{slug}/notifications",
      operationId: "listNotifications",
      summary: "The voter's notifications",
      description:
        "The voter's notifications, newest first, each with its feature as it is now; listed while the feature exists, " +
        `whatever its visibility. ${identityNote}`,
      tags: ["Notifications"],
      request: { params, query: NotificationsQuery },
      responses: {
        200: jsonContent(listEnvelopeOf(NotificationObject), "A page of notifications"),
        ...notModified,
        ...readErrors,
      },
    },
  ),
);

export const getUnreadNotificationCount = createRoute(
  describedRoute(
    { kind: "read", voter: "required" },
    {
      method: "get",
      path: "/projects/{slug}/notifications/unread-count",
      operationId: "getUnreadNotificationCount",
      summary: "How many of the voter's notifications are unread",
      description: identityNote,
      tags: ["Notifications"],
      request: { params },
      responses: {
        200: jsonContent(envelopeOf(UnreadCountObject), "The unread count"),
        ...notModified,
        ...readErrors,
      },
    },
  ),
);

export const markNotificationsRead = createRoute(
  describedRoute(
    { kind: "write" },
    {
      method: "post",
      path: "/projects/{slug}/notifications/read",
      operationId: "markNotificationsRead",
      summary: "Mark notifications read",
      description:
        "`{ids}` (1 to 100) marks those of the voter's unread notifications read (other ids are ignored); `{all: true}` marks " +
        "all of them. Both, neither, or 0 or more than 100 ids: 422 validation_failed naming ids. `updated` counts the " +
        "notifications that went from unread to read by this call.",
      tags: ["Notifications"],
      request: {
        params,
        body: { content: { "application/json": { schema: NotificationReadBody } }, required: true, description: "Which to mark read" },
      },
      responses: {
        200: jsonContent(envelopeOf(NotificationsReadObject), "How many went from unread to read"),
        ...writeErrors,
      },
    },
  ),
);
