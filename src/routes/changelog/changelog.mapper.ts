/** Release rows -> ReleaseObject (contract) and AdminReleaseObject (owner-api-v3.md, Objects). */
import { rfc3339OrNull } from "../../lib/http/timestamps.ts";
import type { AdminReleaseObject } from "./changelog.owner.schemas.ts";
import type { ReleaseFeatureRow, ReleaseRow } from "./changelog.repository.ts";
import type { ReleaseFeatureObject, ReleaseObject } from "./changelog.schemas.ts";

/** Maps a release row and its (already filtered, ordered) feature rows to a ReleaseObject; view_count null unless `showViews`. */
export function toReleaseObject(row: ReleaseRow, features: ReleaseFeatureRow[], showViews: boolean): ReleaseObject {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    body: row.body,
    body_html: row.body_html,
    is_featured: row.is_featured,
    published_at: rfc3339OrNull(row.published_at),
    view_count: showViews ? row.view_count : null,
    features: features.map(
      (f): ReleaseFeatureObject => ({ id: f.id, heading: f.heading, status: f.status, changelog_type: f.changelog_type }),
    ),
  };
}

/** draft (no published_at), scheduled (after `now`) or published (Rule 4). */
export function releaseStatus(publishedAt: Date | null, now: Date): AdminReleaseObject["status"] {
  if (publishedAt === null) return "draft";
  return publishedAt.getTime() > now.getTime() ? "scheduled" : "published";
}

/** ReleaseObject with every feature (public or not), the view count always, and the status at `now`. */
export function toAdminReleaseObject(row: ReleaseRow, features: ReleaseFeatureRow[], now: Date): AdminReleaseObject {
  const base = toReleaseObject(row, features, true);
  return { ...base, view_count: row.view_count, status: releaseStatus(row.published_at, now) };
}
