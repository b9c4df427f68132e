/** Handler of GET /events (owner-api-v3.md): query -> committed events of the project -> EventObject[] + Meta. */
import { eventPosition } from "../../events/outbox.ts";
import { toEventObject } from "../../events/payload.ts";
import { page } from "../../lib/http/envelope.ts";
import { pageMeta } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { listEvents } from "./events.owner.repository.ts";
import type * as routes from "./events.owner.routes.ts";

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
