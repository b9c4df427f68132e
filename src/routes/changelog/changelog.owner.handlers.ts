/**
 * Handlers of the owner release routes: one transaction per write, slugs unique under the
 * project's "releases" advisory lock (owner-api-v3.md, Routes /releases; Rule 4); a write that
 * makes a release public at once records release.published with it (changelog.publication.ts).
 */
import type { Db } from "../../../db/connect.ts";
import { lockProjectScope } from "../../lib/data/owner-locks.ts";
import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import { page, success } from "../../lib/http/envelope.ts";
import { ApiError, notFound, validationError } from "../../lib/http/errors.ts";
import { pageMeta, pageOffset } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { renderMarkdown } from "../../lib/rules/markdown.ts";
import { slugify } from "../../lib/rules/slug.ts";
import { byRelease } from "./changelog.handlers.ts";
import { toAdminReleaseObject } from "./changelog.mapper.ts";
import {
  countReleases,
  deleteRelease,
  existingFeatureIds,
  findRelease,
  findReleaseBySlug,
  insertRelease,
  listAllReleaseFeatures,
  listAllReleases,
  replaceReleaseFeatures,
  updateRelease,
} from "./changelog.owner.repository.ts";
import type * as routes from "./changelog.owner.routes.ts";
import type { ReleaseFeatureInput } from "./changelog.owner.schemas.ts";
import { settleReleasePublication } from "./changelog.publication.ts";

/** The default slug of a release: slugify(name) (as the importer derives it), at most 100 characters. */
export function defaultReleaseSlug(name: string): string {
  return slugify(name).slice(0, 100).replace(/-+$/, "") || "release";
}

async function assertSlugFree(trx: Db, projectId: number, slug: string, exceptId?: number): Promise<void> {
  if ((await findReleaseBySlug(trx, projectId, slug, exceptId)) !== undefined) {
    throw new ApiError("already_exists", `a release with slug "${slug}" already exists`);
  }
}

/** 422 features[i].feature_id for a feature listed twice, unknown, or of another project. */
async function assertFeatures(trx: Db, projectId: number, features: ReleaseFeatureInput[]): Promise<void> {
  const known = await existingFeatureIds(
    trx,
    projectId,
    features.map((f) => f.feature_id),
  );
  const seen = new Set<number>();
  features.forEach((f, i) => {
    const field = `features[${i}].feature_id`;
    if (seen.has(f.feature_id)) throw validationError(field, `${field}: feature ${f.feature_id} is listed twice`);
    seen.add(f.feature_id);
    if (!known.has(f.feature_id)) throw validationError(field, `${field}: no feature ${f.feature_id} in this project`);
  });
}

async function adminRelease(trx: Db, projectId: number, id: number, now: Date) {
  const row = await findRelease(trx, projectId, id);
  if (!row) throw notFound("release");
  return toAdminReleaseObject(row, await listAllReleaseFeatures(trx, [id]), now);
}

export const adminListReleases: AppRouteHandler<typeof routes.adminListReleases> = async (c) => {
  const query = c.req.valid("query");
  const { db, now } = c.get("deps");
  const projectId = c.get("project").id;
  const at = now();
  const [total, rows] = await Promise.all([
    countReleases(db, projectId),
    listAllReleases(db, projectId, { limit: query.per_page, offset: pageOffset(query) }),
  ]);
  const features = byRelease(
    await listAllReleaseFeatures(
      db,
      rows.map((row) => row.id),
    ),
  );
  return c.json(
    page(
      rows.map((row) => toAdminReleaseObject(row, features.get(row.id) ?? [], at)),
      pageMeta(query, total),
    ),
    200,
  );
};

export const adminGetRelease: AppRouteHandler<typeof routes.adminGetRelease> = async (c) => {
  const { id } = c.req.valid("param");
  const { db, now } = c.get("deps");
  return c.json(success(await adminRelease(db, c.get("project").id, id, now())), 200);
};

export const adminCreateRelease: AppRouteHandler<typeof routes.adminCreateRelease> = async (c) => {
  const values = c.req.valid("json");
  const { db, now } = c.get("deps");
  const projectId = c.get("project").id;
  const slug = values.slug ?? defaultReleaseSlug(values.name);
  const bodyHtml = renderMarkdown(values.body);
  const at = now();
  const release = await withProjectWriteLock(db, c.get("project").id, async (trx) => {
    await lockProjectScope(trx, "releases", projectId);
    await assertFeatures(trx, projectId, values.features);
    await assertSlugFree(trx, projectId, slug);
    const id = await insertRelease(trx, {
      project_id: projectId,
      name: values.name,
      slug,
      body: values.body,
      body_html: bodyHtml,
      is_featured: values.is_featured,
      published_at: values.published_at,
    });
    await replaceReleaseFeatures(trx, id, values.features);
    await settleReleasePublication(trx, projectId, id, at);
    return adminRelease(trx, projectId, id, at);
  });
  return c.json(success(release), 201);
};

export const adminUpdateRelease: AppRouteHandler<typeof routes.adminUpdateRelease> = async (c) => {
  const { id } = c.req.valid("param");
  const { features, body, ...fields } = c.req.valid("json");
  const { db, now } = c.get("deps");
  const projectId = c.get("project").id;
  const at = now();
  const release = await withProjectWriteLock(db, c.get("project").id, async (trx) => {
    await lockProjectScope(trx, "releases", projectId);
    if (!(await findRelease(trx, projectId, id))) throw notFound("release");
    if (features !== undefined) await assertFeatures(trx, projectId, features);
    if (fields.slug !== undefined) await assertSlugFree(trx, projectId, fields.slug, id);
    await updateRelease(trx, id, { ...fields, ...(body === undefined ? {} : { body, body_html: renderMarkdown(body) }) });
    if (features !== undefined) await replaceReleaseFeatures(trx, id, features);
    await settleReleasePublication(trx, projectId, id, at);
    return adminRelease(trx, projectId, id, at);
  });
  return c.json(success(release), 200);
};

export const adminDeleteRelease: AppRouteHandler<typeof routes.adminDeleteRelease> = async (c) => {
  const { id } = c.req.valid("param");
  if (!(await deleteRelease(c.get("deps").db, c.get("project").id, id))) throw notFound("release");
  return c.json(success({ deleted: true as const, id }), 200);
};
