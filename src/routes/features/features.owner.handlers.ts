/**
 * Handlers of the owner's feature routes (owner-api-v3.md): parse -> the repositories in one
 * transaction holding the project write lock (withProjectWriteLock: retried
 * on a deadlock victim, never racing a replace) -> AdminFeatureObject read back in it, with the
 * change's events recorded in the same transaction (features.events.ts).
 */
import type { Transaction } from "kysely";
import type { Database } from "../../../db/schema.ts";
import { recordEvents } from "../../events/outbox.ts";
import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import type { ProjectContext } from "../../lib/http/context.ts";
import { page, success } from "../../lib/http/envelope.ts";
import { ApiError, notFound, validationError } from "../../lib/http/errors.ts";
import { pageMeta } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { adminFeatureObject, featureChangeEvents, recordFeatureCreated, recordReachedMilestones } from "./features.events.ts";
import { toAdminFeatureObject } from "./features.mapper.ts";
import { mergeFeature, unmergeFeature } from "./features.merge.repository.ts";
import {
  type AdminFeatureFilter,
  columnExists,
  createAdminFeature,
  deleteAdminFeature,
  findAdminFeature,
  findBoardBySlug,
  listAdminFeatures,
  lockFeature,
  lockFeatureForEdit,
  updateAdminFeature,
} from "./features.owner.repository.ts";
import type * as routes from "./features.owner.routes.ts";
import { findSimilarAdminFeatures } from "./features.similar.ts";

/** The AdminFeatureObject of `id` as the transaction sees it (500 if it vanished: it is locked). */
async function readBack(trx: Transaction<Database>, project: ProjectContext, id: number, now: Date) {
  const row = await findAdminFeature(trx, project, id, now);
  if (!row) throw new ApiError("internal", "the feature could not be read back");
  return toAdminFeatureObject(row, project.settings);
}

export const adminListFeatures: AppRouteHandler<typeof routes.adminListFeatures> = async (c) => {
  const query = c.req.valid("query");
  const { db, now } = c.get("deps");
  const project = c.get("project");
  const filter: AdminFeatureFilter = { statuses: query.status, approved: query.approved, tagIds: query.tag, q: query.q?.trim() };
  if (query.board !== undefined) {
    const board = await findBoardBySlug(db, project.id, query.board);
    if (!board) throw validationError("board", `no board "${query.board}" in this project`);
    filter.boardId = board.id;
  }
  if (query.column === -1) filter.column = "archived";
  else if (query.column !== undefined) {
    if (!(await columnExists(db, project.id, query.column, filter.boardId)))
      throw validationError("column", `no column ${query.column} ${filter.boardId === undefined ? "in this project" : "on this board"}`);
    filter.column = query.column;
  }
  const pageRequest = { page: query.page, per_page: query.per_page };
  const { rows, total } = await listAdminFeatures(db, project, filter, { sort: query.sort, page: pageRequest, now: now() });
  return c.json(
    page(
      rows.map((row) => toAdminFeatureObject(row, project.settings)),
      pageMeta(pageRequest, total),
    ),
    200,
  );
};

export const adminGetFeature: AppRouteHandler<typeof routes.adminGetFeature> = async (c) => {
  const { id } = c.req.valid("param");
  const { db, now } = c.get("deps");
  const row = await findAdminFeature(db, c.get("project"), id, now());
  if (!row) throw notFound("feature");
  return c.json(success(toAdminFeatureObject(row, c.get("project").settings)), 200);
};

export const adminCreateFeature: AppRouteHandler<typeof routes.adminCreateFeature> = async (c) => {
  const body = c.req.valid("json");
  const { db, now } = c.get("deps");
  const project = c.get("project");
  const at = now();
  const feature = await withProjectWriteLock(db, project.id, async (trx) =>
    recordFeatureCreated(trx, project, await createAdminFeature(trx, project.id, body, at), at),
  );
  return c.json(success(feature), 201);
};

export const adminUpdateFeature: AppRouteHandler<typeof routes.adminUpdateFeature> = async (c) => {
  const { id } = c.req.valid("param");
  const body = c.req.valid("json");
  const { db, now } = c.get("deps");
  const project = c.get("project");
  const at = now();
  const feature = await withProjectWriteLock(
    db,
    project.id,
    async (trx) => {
      // Locked and read in one statement (which also takes the project's write lock), so
      // `before` is the state this edit replaces; read again when a change committed while the
      // lock was awaited (`fresh` false).
      const current = await lockFeatureForEdit(trx, project, id, at);
      if (!current) throw notFound("feature");
      const before = current.fresh ? toAdminFeatureObject(current, project.settings) : await adminFeatureObject(trx, project, id, at);
      const updated = await updateAdminFeature(trx, project, current, body, at);
      const after = updated ? toAdminFeatureObject(updated, project.settings) : before;
      await recordEvents(trx, project.id, featureChangeEvents("feature.updated", before, after));
      return after;
    },
    { firstStatementLocks: true },
  );
  // An edit of one feature changes no key, setting, board, tag list or voter: what it changes
  // (answers, listing totals) is retired by its new content revision on every instance.
  c.set("lookupsUnchanged", true);
  return c.json(success(feature), 200);
};

export const adminDeleteFeature: AppRouteHandler<typeof routes.adminDeleteFeature> = async (c) => {
  const { id } = c.req.valid("param");
  const { db, now } = c.get("deps");
  const project = c.get("project");
  const deleted = await withProjectWriteLock(db, project.id, async (trx) => {
    if (!(await lockFeature(trx, project.id, id))) return false;
    const feature = await adminFeatureObject(trx, project, id, now());
    if (!(await deleteAdminFeature(trx, project.id, id))) return false;
    await recordEvents(trx, project.id, [{ type: "feature.deleted", object: feature }]);
    return true;
  });
  if (!deleted) throw notFound("feature");
  return c.json(success({ deleted: true as const, id }), 200);
};

export const adminMergeFeature: AppRouteHandler<typeof routes.adminMergeFeature> = async (c) => {
  const { id } = c.req.valid("param");
  const { into_id } = c.req.valid("json");
  const { db, now } = c.get("deps");
  const project = c.get("project");
  const at = now();
  const target = await withProjectWriteLock(db, project.id, async (trx) => {
    // Both rows locked in id order (the order mergeFeature takes them), so `before` is the
    // duplicate this merge changes, not one a racing vote has changed since.
    for (const featureId of [id, into_id].sort((a, b) => a - b)) await lockFeature(trx, project.id, featureId);
    const before = await findAdminFeature(trx, project, id, at);
    const outcome = await mergeFeature(trx, project.id, id, into_id, at);
    if (outcome.kind === "source_missing" || !before) throw notFound("feature");
    if (outcome.kind === "target_missing") throw validationError("into_id", `no feature ${into_id} in this project`);
    if (outcome.kind === "conflict") throw new ApiError("already_exists", outcome.message);
    const after = await adminFeatureObject(trx, project, id, at);
    await recordEvents(trx, project.id, featureChangeEvents("feature.merged", toAdminFeatureObject(before, project.settings), after));
    await recordReachedMilestones(trx, project, [into_id], at);
    return readBack(trx, project, into_id, at);
  });
  return c.json(success(target), 200);
};

export const adminUnmergeFeature: AppRouteHandler<typeof routes.adminUnmergeFeature> = async (c) => {
  const { id } = c.req.valid("param");
  const { db, now } = c.get("deps");
  const project = c.get("project");
  const at = now();
  const source = await withProjectWriteLock(db, project.id, async (trx) => {
    // Read before unmergeFeature locks the pair: a merged duplicate is archived (no votes reach
    // it), so only an owner edit racing this unmerge could make `before` stale.
    const before = await findAdminFeature(trx, project, id, at);
    const outcome = await unmergeFeature(trx, project.id, id, at);
    if (outcome.kind === "source_missing" || !before) throw notFound("feature");
    if (outcome.kind === "not_merged") throw new ApiError("not_found", "this feature is not merged", { status: 409 });
    const after = await adminFeatureObject(trx, project, id, at);
    await recordEvents(trx, project.id, featureChangeEvents("feature.unmerged", toAdminFeatureObject(before, project.settings), after));
    await recordReachedMilestones(trx, project, [id], at);
    return after;
  });
  return c.json(success(source), 200);
};

export const adminListSimilarFeatures: AppRouteHandler<typeof routes.adminListSimilarFeatures> = async (c) => {
  const { id } = c.req.valid("param");
  const { limit } = c.req.valid("query");
  const { db, now } = c.get("deps");
  return c.json(success(await findSimilarAdminFeatures(db, c.get("project"), { featureId: id }, limit, now())), 200);
};
