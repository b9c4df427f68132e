/** Message routes (contract, "Reading a board" and "Taking part": messages and dismiss). */
import { createRoute, z } from "@hono/zod-openapi";
import semver from "semver";
import { envelopeOf, jsonContent, listEnvelopeOf, notModified } from "../../contract/envelope.ts";
import { readErrors, writeErrors } from "../../contract/errors.ts";
import { idParam, PageQuery, SlugParam } from "../../contract/params.ts";
import { describedRoute } from "../../contract/route-description.ts";
import { MessageDismissedObject, MessageObject } from "./messages.schemas.ts";

export const PLATFORMS = ["ios", "macos", "web"] as const;

const MessagesQuery = z.object({
  platform: z
    .enum(PLATFORMS)
    .optional()
    .openapi({
      param: { name: "platform", in: "query" },
      description:
        "Asking platform. A message aimed at platforms is sent only to one of them; omitting it returns only messages aimed at everybody",
      example: "ios",
    }),
  app_version: z
    .string()
    .max(64)
    .refine((value) => semver.coerce(value) !== null, { message: "not a version number (expected like 1.4.2)" })
    .optional()
    .openapi({
      param: { name: "app_version", in: "query" },
      description:
        "Asking app's version (semver; partial versions such as 2.1 are completed with zeros). A message with a " +
        "version range is sent only to a build inside it (bounds inclusive); omitting it excludes every message that names a range",
      example: "2.4.1",
    }),
  ...PageQuery,
});

export const listMessages = createRoute(
  describedRoute(
    { kind: "read", voter: "optional" },
    {
      method: "get",
      path: "/projects/{slug}/messages",
      operationId: "listMessages",
      summary: "In-app messages for this client",
      description:
        "Messages running now (started, not ended) aimed at the asking platform and app version, minus those the " +
        "request's voter dismissed; priority descending, then newest first. 403 not_allowed when the owner is not on PRO.",
      tags: ["Messages"],
      request: { params: z.object({ slug: SlugParam }), query: MessagesQuery },
      responses: {
        200: jsonContent(listEnvelopeOf(MessageObject), "A page of messages"),
        ...notModified,
        ...readErrors,
      },
    },
  ),
);

export const dismissMessage = createRoute(
  describedRoute(
    { kind: "write" },
    {
      method: "post",
      path: "/projects/{slug}/messages/{id}/dismiss",
      operationId: "dismissMessage",
      summary: "Dismiss a message for this voter",
      description:
        "Records that the voter dismissed the message; it is never sent to them again on any device. Dismissing " +
        "twice answers 200 again. 403 not_allowed when the message is not dismissible.",
      tags: ["Messages"],
      request: { params: z.object({ slug: SlugParam, id: idParam("id", "Message id") }) },
      responses: {
        200: jsonContent(envelopeOf(MessageDismissedObject), "The message is dismissed"),
        ...writeErrors,
      },
    },
  ),
);
