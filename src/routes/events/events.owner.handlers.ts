/** Handler of GET /events (owner-api-v3.md): query -> committed events of the project -> EventObject[] + Meta. */
import { eventPosition, type StoredEvent } from "../../events/outbox.ts";
import { page } from "../../lib/envelope.ts";
import type { AppRouteHandler } from "../../lib/openapi.ts";
import { pageMeta } from "../../lib/pagination.ts";
import { rfc3339 } from "../../lib/timestamps.ts";
import { listEvents } from "./events.owner.repository.ts";
import type * as routes from "./events.owner.routes.ts";
import type { EventObjectValue } from "./events.owner.schemas.ts";

/** A stored event as the EventObject of project `slug`. */
export function toEventObject(event: StoredEvent, slug: string): EventObjectValue {
  return {
    id: event.id,
    type: event.type,
    created_at: rfc3339(event.createdAt),
    project: slug,
    data: { object: event.data.object, changes: event.data.changes ?? null },
  };
}

export const adminListEvents: AppRouteHandler<typeof routes.adminListEvents> = async (c) => {
  const query = c.req.valid("query");
  const project = c.get("project");
  const request = { page: query.page, per_page: query.per_page };
  // `after` was checked by the query schema; eventPosition decodes it.
  const after = query.after === undefined ? null : eventPosition(query.after);
  const { rows, total } = await listEvents(c.get("deps").db, { projectId: project.id, types: query.type, after }, request);
  return c.json(
    page(
      rows.map((event) => toEventObject(event, project.slug)),
      pageMeta(request, total),
    ),
    200,
  );
};
