/**
 * Handlers of the subscriptions area (engagement-api-v3.md, "Subscriptions"): voter -> feature
 * visibility and the row change in one transaction (subscriptions.repository.ts) -> mapper.
 */
import { page, success } from "../../lib/http/envelope.ts";
import { ApiError, notFound } from "../../lib/http/errors.ts";
import { pageMeta } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { requireVoter } from "../../middleware/voter.ts";
import { toSubscriptionObject } from "./subscriptions.mapper.ts";
import { listVoterSubscriptions, subscribe, unsubscribe } from "./subscriptions.repository.ts";
import type * as routes from "./subscriptions.routes.ts";

export const listSubscriptions: AppRouteHandler<typeof routes.listSubscriptions> = async (c) => {
  const paging = c.req.valid("query");
  const voter = c.get("voter");
  if (!voter) {
    // The voter middleware has refused a bad identity (401 identity_invalid); a read without any
    // is refused here. A valid SSO token whose user has no voter yet follows nothing.
    if (!c.req.header("X-VF-Token") && !c.req.header("X-VF-Anon")) {
      throw new ApiError("identity_required", "send a voter identity in X-VF-Anon or X-VF-Token");
    }
    return c.json(page([], pageMeta(paging, 0)), 200);
  }
  const { rows, total } = await listVoterSubscriptions(c.get("deps").db, c.get("project"), voter.id, paging);
  return c.json(page(rows.map(toSubscriptionObject), pageMeta(paging, total)), 200);
};

export const subscribeToFeature: AppRouteHandler<typeof routes.subscribeToFeature> = async (c) => {
  const { id } = c.req.valid("param");
  const { db, now } = c.get("deps");
  const row = await subscribe(db, c.get("project"), id, requireVoter(c.get("voter")).id, now());
  if (!row) throw notFound("feature");
  // Subscriptions show in no cached public read: other readers' answers stay valid.
  c.set("contentUnchanged", true);
  return c.json(success(toSubscriptionObject(row)), 200);
};

export const unsubscribeFromFeature: AppRouteHandler<typeof routes.unsubscribeFromFeature> = async (c) => {
  const { id } = c.req.valid("param");
  const { db, now } = c.get("deps");
  if (!(await unsubscribe(db, c.get("project"), id, requireVoter(c.get("voter")).id, now()))) throw notFound("feature");
  c.set("contentUnchanged", true);
  return c.json(success({ feature_id: id, subscribed: false as const }), 200);
};
