/**
 * The events feed's objects (owner-api-v3.md, "Events"): EventObject and the query of
 * GET /events (type[], after, page, per_page).
 */
import { z } from "@hono/zod-openapi";
import { EVENT_TYPES } from "../../contract/enums.ts";
import { eventPosition } from "../../events/outbox.ts";
import { PageQuery } from "../../contract/params.ts";
import { repeatedParam } from "../../contract/params.ts";

const EventChange = z
  .object({
    from: z.unknown().openapi({ description: "Value before the change (references as ids)" }),
    to: z.unknown().openapi({ description: "Value after the change (references as ids)" }),
  })
  .openapi("EventChange");

export const EventObject = z
  .object({
    id: z.string().openapi({
      description: "Event id: `evt_` and 26 base32 characters; ids sort in feed order and are stable",
      example: "evt_00000000000fw00000000000q",
    }),
    type: z.enum(EVENT_TYPES).openapi({ description: "What happened (owner-api-v3.md, Events table)", example: "feature.status_changed" }),
    created_at: z.string().openapi({ description: "When the change was made, RFC 3339 UTC", example: "2026-11-23T12:00:00.000Z" }),
    project: z.string().openapi({ description: "Slug of the project", example: "lumen" }),
    data: z
      .object({
        object: z.record(z.string(), z.unknown()).openapi({
          description:
            "The object after the change as the owner API shows it (AdminFeatureObject, CommentObject with author_role, " +
            "AdminReleaseObject, AdminVoterObject; for votes {feature_id, voter_id, vote_count}); for feature.deleted and " +
            "voter.deleted the object as it was",
          example: { feature_id: 41, voter_id: "v_3k9x2m", vote_count: 12 },
        }),
        changes: z
          .record(z.string(), EventChange)
          .nullable()
          .openapi({
            description: "For updates, {field: {from, to}} of each changed field; null otherwise",
            example: { status: { from: "planned", to: "in_progress" } },
          }),
      })
      .openapi({ description: "What changed" }),
  })
  .openapi("EventObject");

export type EventObject = z.infer<typeof EventObject>;

export const EventListQuery = z.object({
  type: repeatedParam(z.enum(EVENT_TYPES))
    .optional()
    .openapi({
      param: { name: "type", in: "query", style: "form", explode: true },
      description: "Event type; repeat to match any of several (type=a&type=b); omitted: every type",
      example: ["feature.created"],
    }),
  after: z
    .string()
    .refine((value) => eventPosition(value) !== null, { message: "must be an event id (evt_ and 26 base32 characters)" })
    .optional()
    .openapi({
      param: { name: "after", in: "query" },
      description:
        "Only events after this one in feed order (the id of the last event a reader has); page and per_page then " +
        "page through what follows it",
      example: "evt_00000000000fw00000000000q",
    }),
  ...PageQuery,
});
