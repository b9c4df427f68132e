/** Handlers of the changelog routes: parse -> repository -> ReleaseObject (contract, ReleaseObject). */
import { page, success } from "../../lib/http/envelope.ts";
import { notFound } from "../../lib/http/errors.ts";
import { pageMeta, pageOffset } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { toReleaseObject } from "./changelog.mapper.ts";
import {
  countPublishedReleases,
  findPublishedRelease,
  listPublishedReleases,
  listReleaseFeatures,
  type ReleaseFeatureRow,
} from "./changelog.repository.ts";
import type * as routes from "./changelog.routes.ts";

/** Feature rows grouped by release id, each list in the rows' order. */
export function byRelease(rows: ReleaseFeatureRow[]): Map<number, ReleaseFeatureRow[]> {
  const grouped = new Map<number, ReleaseFeatureRow[]>();
  for (const row of rows) {
    const list = grouped.get(row.release_id) ?? [];
    list.push(row);
    grouped.set(row.release_id, list);
  }
  return grouped;
}

export const listReleases: AppRouteHandler<typeof routes.listReleases> = async (c) => {
  const query = c.req.valid("query");
  const { db, now } = c.get("deps");
  const project = c.get("project");
  const at = now();
  const [total, rows] = await Promise.all([
    countPublishedReleases(db, project.id, at),
    listPublishedReleases(db, project.id, at, { limit: query.per_page, offset: pageOffset(query) }),
  ]);
  const features = byRelease(
    await listReleaseFeatures(
      db,
      project,
      rows.map((row) => row.id),
    ),
  );
  const data = rows.map((row) => toReleaseObject(row, features.get(row.id) ?? [], project.settings.show_views));
  // Releases show nothing a vote changes (read-dependencies.ts).
  c.set("readDependencies", { kind: "not-votes" });
  return c.json(page(data, pageMeta(query, total)), 200);
};

export const getRelease: AppRouteHandler<typeof routes.getRelease> = async (c) => {
  const { id } = c.req.valid("param");
  const { db, now } = c.get("deps");
  const project = c.get("project");
  const row = await findPublishedRelease(db, project.id, id, now());
  if (!row) throw notFound("release");
  const features = await listReleaseFeatures(db, project, [row.id]);
  c.set("readDependencies", { kind: "not-votes" });
  return c.json(success(toReleaseObject(row, features, project.settings.show_views)), 200);
};
