/** The owner's events feed (owner-api-v3.md, "Routes": GET /events; "Events"). */
import { createRoute } from "@hono/zod-openapi";
import { jsonContent, listEnvelopeOf, notModified } from "../../contract/envelope.ts";
import { OWNER_PATH, OwnerSlugParams, ownerReadErrors, ownerRoute } from "../../contract/owner-routes.ts";
import { EventListQuery, EventObject } from "./events.owner.schemas.ts";

export const adminListEvents = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/events`,
    operationId: "adminListEvents",
    summary: "List events",
    description:
      "The project's events, oldest first: every change of the kinds in the Events table, recorded in the transaction " +
      "that made it. Ids increase in feed order, and paging with `after` (the id of the last event read) never skips " +
      "an event, not even one whose transaction committed after a later-numbered one: an event is listed once every " +
      "transaction older than it has ended (usually milliseconds later). 422 type for an unknown type, 422 after for " +
      "a string that is not an event id.",
    request: { params: OwnerSlugParams, query: EventListQuery },
    responses: {
      200: jsonContent(listEnvelopeOf(EventObject), "A page of events with Meta"),
      ...notModified,
      ...ownerReadErrors,
    },
  }),
);
