/**
 * Handlers of the features area: parse -> repository -> toFeatureObject -> envelope; the
 * listing's page comes as JSON text written by Postgres (features.json.ts) in its envelope.
 */

import type { ProjectSettings } from "../../../db/schema.ts";
import type { ReadDependencies } from "../../lib/data/read-dependencies.ts";
import type { AppDeps } from "../../lib/http/context.ts";
import { success } from "../../lib/http/envelope.ts";
import { ApiError, notFound, validationError } from "../../lib/http/errors.ts";
import { pageMeta } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { requireVoter } from "../../middleware/voter.ts";
import { toFeatureObject } from "./features.mapper.ts";
import { listingObjects } from "./features.object-cache.ts";
import { type FeatureListFilter, type FeaturePageJson, featureObjectShape, findFeature, listFeaturePage } from "./features.repository.ts";
import type * as routes from "./features.routes.ts";
import type { FeatureSort } from "./features.schemas.ts";
import { findSimilarFeatures } from "./features.similar.ts";
import { findSuggestionColumn, insertSuggestion } from "./features.suggest.repository.ts";
import { findListTarget } from "./features.targets.repository.ts";
import { listingTotal } from "./features.totals.ts";

/**
 * Board and column of a listing as row ids. 422 validation_failed (field board or column) for
 * a board slug the project lacks, a column not on that board, a column the document hides
 * (the denied column under show_denied false) or -1 while the archived column is hidden.
 */
async function resolveTarget(
  deps: Pick<AppDeps, "db" | "caches">,
  project: { id: number; settings: ProjectSettings },
  query: { board?: string | undefined; column?: number | undefined; scope?: "project" | undefined },
): Promise<Pick<FeatureListFilter, "boardId" | "column">> {
  if (query.scope === "project") {
    if (query.board !== undefined) throw validationError("scope", "scope=project cannot be combined with board");
    if (query.column !== undefined) throw validationError("scope", "scope=project cannot be combined with column");
    return { boardId: null, column: null };
  }
  const wantsColumn = query.column !== undefined && query.column !== -1 ? query.column : null;
  // Boards and columns change only with an import (which clears the cache): no query per page.
  const target = await deps.caches.listTargets.remember([project.id, query.board ?? "", wantsColumn ?? ""], () =>
    findListTarget(deps.db, project.id, query.board ?? null, wantsColumn),
  );
  if (!target) throw validationError("board", `no board "${query.board}" in this project`);
  if (query.column === undefined) return { boardId: target.boardId, column: null };
  if (query.column === -1) {
    if (!project.settings.show_archived) throw validationError("column", "the archived column (-1) is hidden in this project");
    return { boardId: target.boardId, column: "archived" };
  }
  if (!target.column || (target.column.status === "denied" && !project.settings.show_denied)) {
    throw validationError("column", `no column ${query.column} on this board`);
  }
  return { boardId: target.boardId, column: target.column.id };
}

/**
 * What a page of the listing shows, for the shared read cache (read-dependencies.ts): its ids,
 * which features its filter can list, and how a vote could move an unlisted feature into it
 * under `sort` (ordered() in features.repository.ts: pinned first, then the sort's key, ties by
 * id descending).
 */
function listingDependencies(
  page: FeaturePageJson,
  filter: FeatureListFilter,
  sort: FeatureSort,
  settings: ProjectSettings,
  firstPage: boolean,
): ReadDependencies {
  const { ids, last, total } = page;
  const full = total > ids.length;
  const listing = {
    kind: "listing" as const,
    ids,
    firstPage,
    filter: { boardId: filter.boardId, column: filter.column, statuses: filter.statuses ?? null, tagIds: filter.tagIds ?? null },
  };
  const scored = (key: "vote_count" | "weighted_score"): ReadDependencies => ({
    ...listing,
    order: { by: "score", key, last: full && last ? { id: last.id, key: last[key] } : null },
  });
  switch (sort) {
    case "top":
      return scored(settings.score_is_weighted ? "weighted_score" : "vote_count");
    case "votes":
      return scored("vote_count");
    case "trending":
      return { ...listing, order: { by: "trending", last: full && last ? { id: last.id, key: last.trending_score } : null } };
    case "board":
    case "new":
    case "oldest":
    case "comments":
      return { ...listing, order: { by: "fixed" } };
  }
}

export const listFeatures: AppRouteHandler<typeof routes.listFeatures> = async (c) => {
  const query = c.req.valid("query");
  const deps = c.get("deps");
  const project = c.get("project");
  const target = await resolveTarget(deps, project, query);
  const pageRequest = { page: query.page, per_page: query.per_page };
  const filter = { ...target, tagIds: query.tag, statuses: query.status, q: query.q?.trim() };
  const { show_denied, show_archived } = project.settings;
  const filterKey = JSON.stringify([filter, show_denied, show_archived]);
  const voterId = c.get("voter")?.id ?? null;
  const revision = c.get("contentRevision");
  const builtAt = deps.now();
  const objects = await listingObjects(deps, {
    projectId: project.id,
    shape: featureObjectShape(project.settings),
    listing: JSON.stringify([filterKey, query.sort, pageRequest.page, pageRequest.per_page]),
    revision,
    voterId,
    builtAt,
  });
  const pageOf = (knownTotal: number | undefined) =>
    listFeaturePage(deps.db, project, filter, {
      sort: query.sort,
      page: pageRequest,
      voterId,
      now: builtAt,
      knownTotal,
      kept: objects.kept,
      keptAll: objects.keptAll,
    });
  // Counting even a small listing cost as much as its page (0.4 of 0.8 ms in Postgres): the
  // total is counted once per filter and kept while only votes change the project.
  const { total, counted } = await listingTotal(deps, [project.id, filterKey], revision, () => pageOf(undefined));
  const listing = counted ?? (await pageOf(total));
  await objects.keep(listing);
  c.set("readDependencies", listingDependencies(listing, filter, query.sort, project.settings, pageRequest.page === 1));
  // The envelope around the data Postgres wrote (features.json.ts): the text JSON.stringify of
  // page(rows.map(toFeatureObject), meta) gives, without parsing the rows or serializing them.
  const meta = JSON.stringify(pageMeta(pageRequest, listing.total));
  return c.body(`{"data":${listing.data},"meta":${meta},"error":null}`, 200, { "Content-Type": "application/json" }) as never;
};

export const getFeature: AppRouteHandler<typeof routes.getFeature> = async (c) => {
  const { id } = c.req.valid("param");
  const { db, now } = c.get("deps");
  const row = await findFeature(db, c.get("project"), id, { voterId: c.get("voter")?.id ?? null, now: now() });
  if (!row) throw notFound("feature");
  c.set("readDependencies", { kind: "feature", featureId: id });
  return c.json(success(toFeatureObject(row, c.get("project").settings)), 200);
};

export const createFeature: AppRouteHandler<typeof routes.createFeature> = async (c) => {
  const body = c.req.valid("json");
  const { db, now } = c.get("deps");
  const project = c.get("project");
  const voter = requireVoter(c.get("voter"));
  if (!project.settings.allow_suggestions) throw new ApiError("not_allowed", "this project does not take suggestions");
  if (voter.banned) throw new ApiError("voter_banned", "this voter may not make suggestions");
  const column = await findSuggestionColumn(db, project.id);
  if (!column) throw new ApiError("not_allowed", "the roadmap has no open column to take suggestions");
  const at = now();
  const id = await insertSuggestion(
    db,
    {
      projectId: project.id,
      boardId: column.board_id,
      columnId: column.column_id,
      heading: body.heading,
      description: body.description,
      authorVoterId: voter.id,
      now: at,
    },
    project.settings,
  );
  const row = await findFeature(db, project, id, { voterId: voter.id, now: at });
  if (!row) throw new ApiError("internal", "the new suggestion could not be read back");
  return c.json(success(toFeatureObject(row, project.settings)), 201);
};

export const listSimilarFeatures: AppRouteHandler<typeof routes.listSimilarFeatures> = async (c) => {
  const { q, limit } = c.req.valid("query");
  const { db, now } = c.get("deps");
  const data = await findSimilarFeatures(db, c.get("project"), q, { voterId: c.get("voter")?.id ?? null, limit, now: now() });
  return c.json(success(data), 200);
};
