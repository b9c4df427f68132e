/** Handlers of the changelog routes: parse -> repository -> ReleaseObject (contract, ReleaseObject). */
import { rfc3339OrNull } from "../../lib/timestamps.ts";
import type { ProjectSettings } from "../../../db/schema.ts";
import { page, success } from "../../lib/envelope.ts";
import { notFound } from "../../lib/errors.ts";
import type { AppRouteHandler } from "../../lib/openapi.ts";
import { pageMeta, pageOffset } from "../../lib/pagination.ts";
import {
  countPublishedReleases, findPublishedRelease, listPublishedReleases, listReleaseFeatures,
  type ReleaseFeatureRow, type ReleaseRow,
} from "./changelog.repository.ts";
import type { GetReleaseRoute, ListReleasesRoute } from "./changelog.routes.ts";
import type { ReleaseFeatureValue, ReleaseObjectValue } from "./changelog.schemas.ts";

/** Maps a release row and its (already filtered, ordered) feature rows to a ReleaseObject. */
export function toReleaseObject(
  row: ReleaseRow,
  features: ReleaseFeatureRow[],
  settings: ProjectSettings,
): ReleaseObjectValue {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    body: row.body,
    body_html: row.body_html,
    is_featured: row.is_featured,
    published_at: rfc3339OrNull(row.published_at),
    view_count: settings.show_views ? row.view_count : null,
    features: features.map(
      (f): ReleaseFeatureValue => ({ id: f.id, heading: f.heading, status: f.status, changelog_type: f.changelog_type }),
    ),
  };
}

function byRelease(rows: ReleaseFeatureRow[]): Map<number, ReleaseFeatureRow[]> {
  const grouped = new Map<number, ReleaseFeatureRow[]>();
  for (const row of rows) {
    const list = grouped.get(row.release_id) ?? [];
    list.push(row);
    grouped.set(row.release_id, list);
  }
  return grouped;
}

export const listReleases: AppRouteHandler<ListReleasesRoute> = async (c) => {
  const query = c.req.valid("query");
  const { db, now } = c.get("deps");
  const project = c.get("project");
  const at = now();
  const [total, rows] = await Promise.all([
    countPublishedReleases(db, project.id, at),
    listPublishedReleases(db, project.id, at, { limit: query.per_page, offset: pageOffset(query) }),
  ]);
  const features = byRelease(await listReleaseFeatures(db, project, rows.map((row) => row.id)));
  const data = rows.map((row) => toReleaseObject(row, features.get(row.id) ?? [], project.settings));
  return c.json(page(data, pageMeta(query, total)), 200);
};

export const getRelease: AppRouteHandler<GetReleaseRoute> = async (c) => {
  const { id } = c.req.valid("param");
  const { db, now } = c.get("deps");
  const project = c.get("project");
  const row = await findPublishedRelease(db, project.id, id, now());
  if (!row) throw notFound("release");
  const features = await listReleaseFeatures(db, project, [row.id]);
  return c.json(success(toReleaseObject(row, features, project.settings)), 200);
};
