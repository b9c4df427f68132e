/**
 * Handlers of the inbox routes (engagement-api-v3.md, "Notifications (in-app inbox)"): the
 * voter's identity -> repository (scoped to that voter) -> NotificationObject.
 */
import type { Context } from "hono";
import type { AppEnv, VoterContext } from "../../lib/http/context.ts";
import { page, success } from "../../lib/http/envelope.ts";
import { ApiError } from "../../lib/http/errors.ts";
import { pageMeta, pageOffset } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { requireVoter } from "../../middleware/voter.ts";
import { notificationRowId, toNotificationObject } from "./notifications.mapper.ts";
import { countUnread, listNotifications as listRows, markRead } from "./notifications.repository.ts";
import type * as routes from "./notifications.routes.ts";

/** The inbox is the voter's own: fresh on every read, never reused from a client cache. */
const INBOX_CACHE_CONTROL = "private, max-age=0";

/**
 * The voter of an inbox read. The voter middleware resolves identities on reads without
 * requiring one: here none is 401 identity_required. A valid SSO token whose user has no voter
 * yet (null) has an empty inbox.
 */
function inboxVoter(c: Context<AppEnv>): VoterContext | null {
  const voter = c.get("voter");
  if (voter) return voter;
  if (!c.req.header("X-VF-Token") && !c.req.header("X-VF-Anon")) {
    throw new ApiError("identity_required", "send a voter identity in X-VF-Anon or X-VF-Token");
  }
  return null;
}

export const listNotifications: AppRouteHandler<typeof routes.listNotifications> = async (c) => {
  const query = c.req.valid("query");
  const voter = inboxVoter(c);
  const { rows, total } = voter
    ? await listRows(
        c.get("deps").db,
        { projectId: c.get("project").id, voterId: voter.id },
        { unread: query.unread, limit: query.per_page, offset: pageOffset(query) },
      )
    : { rows: [], total: 0 };
  c.header("Cache-Control", INBOX_CACHE_CONTROL);
  return c.json(page(rows.map(toNotificationObject), pageMeta(query, total)), 200);
};

export const getUnreadNotificationCount: AppRouteHandler<typeof routes.getUnreadNotificationCount> = async (c) => {
  const voter = inboxVoter(c);
  const unread = voter ? await countUnread(c.get("deps").db, { projectId: c.get("project").id, voterId: voter.id }) : 0;
  c.header("Cache-Control", INBOX_CACHE_CONTROL);
  return c.json(success({ unread_count: unread }), 200);
};

export const markNotificationsRead: AppRouteHandler<typeof routes.markNotificationsRead> = async (c) => {
  const body = c.req.valid("json");
  const voter = requireVoter(c.get("voter"));
  const { db, now } = c.get("deps");
  const ids = body.all === true ? ("all" as const) : (body.ids ?? []).map(notificationRowId).filter((id) => id !== null);
  const updated = await markRead(db, { projectId: c.get("project").id, voterId: voter.id }, ids, now());
  // Read marks show in no public read: the project's cached reads stay valid.
  c.set("contentUnchanged", true);
  return c.json(success({ updated }), 200);
};
