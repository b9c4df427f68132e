/** Handlers of the message routes: targeting, paging and dismissal (contract, MessageObject). */

import semver, { type SemVer } from "semver";
import { page, success } from "../../lib/http/envelope.ts";
import { ApiError, notFound } from "../../lib/http/errors.ts";
import { pageMeta, pageOffset } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { requireVoter } from "../../middleware/voter.ts";
import { toMessageObject } from "./messages.mapper.ts";
import { findMessage, insertDismissal, listCandidateMessages, type MessageRow } from "./messages.repository.ts";
import type * as routes from "./messages.routes.ts";

/**
 * Whether `version` lies inside the message's inclusive range. A message without bounds
 * matches every version; a bound that is not a version at all (the importer refuses those)
 * keeps the message away rather than sending it to everyone.
 */
export function inVersionRange(version: SemVer, row: Pick<MessageRow, "min_app_version" | "max_app_version">): boolean {
  if (row.min_app_version !== null) {
    const min = semver.coerce(row.min_app_version);
    if (min === null || semver.lt(version, min)) return false;
  }
  if (row.max_app_version !== null) {
    const max = semver.coerce(row.max_app_version);
    if (max === null || semver.gt(version, max)) return false;
  }
  return true;
}

export const listMessages: AppRouteHandler<typeof routes.listMessages> = async (c) => {
  const query = c.req.valid("query");
  const version = query.app_version === undefined ? null : semver.coerce(query.app_version);
  const candidates = await listCandidateMessages(c.get("deps").db, c.get("project").id, {
    now: c.get("deps").now(),
    platform: query.platform,
    hasAppVersion: version !== null,
    voterId: c.get("voter")?.id ?? null,
  });
  // The range check is semver, not SQL, so paging happens here on the already ordered list.
  const matching = version === null ? candidates : candidates.filter((row) => inVersionRange(version, row));
  const offset = pageOffset(query);
  const data = matching.slice(offset, offset + query.per_page).map(toMessageObject);
  return c.json(page(data, pageMeta(query, matching.length)), 200);
};

export const dismissMessage: AppRouteHandler<typeof routes.dismissMessage> = async (c) => {
  const { id } = c.req.valid("param");
  const voter = requireVoter(c.get("voter"));
  const { db } = c.get("deps");
  const message = await findMessage(db, c.get("project").id, id);
  if (!message) throw notFound("message");
  if (!message.is_dismissible) throw new ApiError("not_allowed", "this message cannot be dismissed");
  await insertDismissal(db, c.get("project").id, message.id, voter.id);
  return c.json(success({ dismissed: true as const, message_id: message.id }), 200);
};
