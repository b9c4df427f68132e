/** Handlers of the owner's tier routes: parse -> repository (one transaction per write) -> toTier -> envelope. */

import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import { page, success } from "../../lib/http/envelope.ts";
import { ApiError } from "../../lib/http/errors.ts";
import { pageMeta } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { toTier } from "./tiers.owner.mapper.ts";
import { createTier, deleteTier, listTiers, type TierWriteResult, updateTier } from "./tiers.owner.repository.ts";
import type * as routes from "./tiers.owner.routes.ts";

const tierNotFound = () => new ApiError("not_found", "no tier with this id in the project");

/** The written tier, or the error its outcome stands for. */
function written(result: TierWriteResult) {
  if (result.kind === "not_found") throw tierNotFound();
  if (result.kind === "price_taken") {
    throw new ApiError("already_exists", `${result.field}: price id "${result.id}" already belongs to another tier`, {
      field: result.field,
    });
  }
  return success(toTier(result.row));
}

export const adminListTiers: AppRouteHandler<typeof routes.adminListTiers> = async (c) => {
  const { page: pageNumber, per_page } = c.req.valid("query");
  const request = { page: pageNumber, per_page };
  const { rows, total } = await listTiers(c.get("deps").db, c.get("project").id, request);
  return c.json(page(rows.map(toTier), pageMeta(request, total)), 200);
};

export const adminCreateTier: AppRouteHandler<typeof routes.adminCreateTier> = async (c) => {
  const input = c.req.valid("json");
  const projectId = c.get("project").id;
  const result = await withProjectWriteLock(c.get("deps").db, projectId, (trx) => createTier(trx, projectId, input));
  return c.json(written(result), 201);
};

export const adminUpdateTier: AppRouteHandler<typeof routes.adminUpdateTier> = async (c) => {
  const patch = c.req.valid("json");
  const projectId = c.get("project").id;
  const { tier_id } = c.req.valid("param");
  const result = await withProjectWriteLock(c.get("deps").db, projectId, (trx) => updateTier(trx, projectId, tier_id, patch));
  return c.json(written(result), 200);
};

export const adminDeleteTier: AppRouteHandler<typeof routes.adminDeleteTier> = async (c) => {
  const { tier_id } = c.req.valid("param");
  const projectId = c.get("project").id;
  const deleted = await withProjectWriteLock(c.get("deps").db, projectId, (trx) => deleteTier(trx, projectId, tier_id));
  if (!deleted) throw tierNotFound();
  return c.json(success({ deleted: true as const, id: tier_id }), 200);
};
