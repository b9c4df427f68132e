/**
 * The events feed's objects (owner-api-v3.md, "Events"): EventObject, one schema per event type
 * (also the body of that type's webhook delivery), and the query of GET /events (type[], after,
 * page, per_page).
 */
import { z } from "@hono/zod-openapi";
import { EVENT_TYPES, type EventType } from "../../contract/enums.ts";
import { PageQuery, repeatedParam } from "../../contract/params.ts";
import { eventPosition } from "../../events/outbox.ts";
import { AdminReleaseObject } from "../changelog/index.ts";
import { CommentEventObject } from "../comments/index.ts";
import { AdminFeatureObject } from "../features/index.ts";
import { ImportObject } from "../imports/index.ts";
import { AdminVoterObject } from "../voters/index.ts";
import { WebhookObject } from "../webhooks/index.ts";

const EventChange = z
  .object({
    from: z.unknown().openapi({ description: "Value before the change (references as ids)" }),
    to: z.unknown().openapi({ description: "Value after the change (references as ids)" }),
  })
  .required()
  .openapi("EventChange");

/** `{field: {from, to}}` of each changed field of an update; null for the other events. */
const EventChanges = z
  .record(z.string(), EventChange)
  .nullable()
  .openapi({
    description: "For updates, {field: {from, to}} of each changed field; null otherwise",
    example: { status: { from: "planned", to: "in_progress" } },
  });

export const VoteEventObject = z
  .object({
    feature_id: z.number().int().openapi({ description: "The feature voted for", example: 41 }),
    voter_id: z.string().openapi({ description: "Public id of the voter", example: "v_3k9x2m" }),
    vote_count: z.number().int().openapi({ description: "The feature's vote count after the vote or its withdrawal", example: 12 }),
  })
  .openapi("VoteEventObject");

const FEATURE = { object: AdminFeatureObject, what: "the feature after the change (AdminFeatureObject)" };
const VOTE = { object: VoteEventObject, what: "{feature_id, voter_id, vote_count}" };
const COMMENT = { object: CommentEventObject, what: "the comment (CommentObject with author_role)" };
const VOTER = { object: AdminVoterObject, what: "the voter after the change (AdminVoterObject)" };

/**
 * Each type's `data.object` and when it is recorded (owner-api-v3.md, "Events" table). `ping` is
 * delivered by POST /webhooks/{id}/test only, never listed by GET /events.
 */
const EVENT_KINDS = {
  "feature.created": { ...FEATURE, when: "A suggestion (POST features) or an owner's new feature" },
  "feature.updated": { ...FEATURE, when: "Any owner edit; changes lists the fields" },
  "feature.status_changed": { ...FEATURE, when: "The status changed (also in feature.updated); changes.status" },
  "feature.approved": { ...FEATURE, when: "is_approved went from false to true" },
  "feature.merged": { ...FEATURE, what: "the duplicate (AdminFeatureObject)", when: "Merged into another feature; changes.merged_into" },
  "feature.unmerged": { ...FEATURE, what: "the duplicate (AdminFeatureObject)", when: "A merge undone; changes.merged_into" },
  "feature.deleted": { ...FEATURE, what: "the feature as it was (AdminFeatureObject)", when: "The feature was deleted" },
  "feature.vote_milestone": {
    ...FEATURE,
    when: "vote_count reached 10, 25, 50, 100, 250, 500, 1000, then each 1000 (once per threshold); changes is {vote_count: {from: threshold - 1, to: threshold}}",
  },
  "vote.created": { ...VOTE, when: "A voter voted for the feature" },
  "vote.deleted": { ...VOTE, when: "A voter withdrew their vote" },
  "comment.created": { ...COMMENT, when: "A comment or reply was written" },
  "comment.deleted": { ...COMMENT, when: "A comment was deleted (one event per comment removed, replies included)" },
  "release.published": {
    object: AdminReleaseObject,
    what: "the release (AdminReleaseObject)",
    when: "A release became public (at once or at its scheduled time)",
  },
  "voter.banned": { ...VOTER, when: "An owner banned the voter" },
  "voter.unbanned": { ...VOTER, when: "An owner lifted the voter's ban" },
  "voter.deleted": {
    ...VOTER,
    what: "the voter as it was, its personal fields null (AdminVoterObject)",
    when: "The voter was erased",
  },
  "voter.billing_changed": { ...VOTER, when: "Tier, MRR, subscription or churn fields changed by billing sync or an owner" },
  "import.completed": {
    object: ImportObject,
    what: "the import as it ended (ImportObject)",
    when: "An import (not a dry run) ended, succeeded or failed (imports-v3.md, rule 7)",
  },
  ping: {
    object: WebhookObject,
    what: "the webhook pinged (WebhookObject)",
    when: "POST /webhooks/{id}/test only; never listed by GET /events",
  },
} as const satisfies Record<EventType | "ping", { object: z.ZodType; what: string; when: string }>;

type EventKinds = typeof EVENT_KINDS;
/** The event types a webhook may be sent: every type of the feed and `ping`. */
export type WebhookEventType = keyof EventKinds;

/** The component name of an event type's schema: `vote.created` -> `VoteCreatedEvent`. */
export function eventSchemaName(type: WebhookEventType): string {
  return `${type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("")}Event`;
}

/** The EventObject of one type: its `type` a constant, its `data.object` that type's object. */
function eventSchema<T extends WebhookEventType>(type: T) {
  const { object, what, when } = EVENT_KINDS[type];
  return z
    .object({
      id: z.string().openapi({
        description:
          type === "ping"
            ? "Event id: `evt_` and 26 base32 characters, drawn like every event's (a ping is not listed by GET /events)"
            : "Event id: `evt_` and 26 base32 characters; ids sort in feed order and are stable",
        example: "evt_00000000000fw0000000000001",
      }),
      type: z.literal(type).openapi({ description: "What happened (owner-api-v3.md, Events table)" }),
      created_at: z.string().openapi({ description: "When the change was made, RFC 3339 UTC", example: "2026-11-23T12:00:00.000Z" }),
      project: z.string().openapi({ description: "Slug of the project", example: "lumen" }),
      data: z
        .object({ object: object as EventKinds[T]["object"], changes: EventChanges })
        .openapi({ description: `What changed: object is ${what}; changes as described` }),
    })
    .openapi(eventSchemaName(type), { description: `${type}: ${when}` });
}

/** Every type's EventObject schema, by type (the `webhooks` of the description, see events.webhooks.ts). */
export const EVENT_SCHEMAS = Object.fromEntries(
  (Object.keys(EVENT_KINDS) as WebhookEventType[]).map((type) => [type, eventSchema(type)]),
) as { [T in WebhookEventType]: ReturnType<typeof eventSchema<T>> };

const [firstType, ...otherTypes] = EVENT_TYPES.map((type) => EVENT_SCHEMAS[type]);

/**
 * An event of the feed (owner-api-v3.md, "Events"): one of the types' schemas, told apart by
 * `type`, so a typed client narrowing on `type` gets that type's `data.object`.
 */
export const EventObject = z
  .discriminatedUnion("type", [firstType!, ...otherTypes])
  .openapi("EventObject", { description: "An event of the feed; `type` tells which, and so what data.object is" });

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
      example: "evt_00000000000fw0000000000001",
    }),
  ...PageQuery,
});
