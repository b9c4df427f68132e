/** Handlers of the owner tag routes: one transaction per write (owner-api-v3.md, Routes /tags). */

import type { Db } from "../../../db/connect.ts";
import { lockProjectScope } from "../../lib/data/owner-locks.ts";
import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import { page, success } from "../../lib/http/envelope.ts";
import { ApiError, notFound } from "../../lib/http/errors.ts";
import { pageMeta, pageOffset } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { countTags, deleteTag, findTag, findTagByName, insertTag, listTagsPage, renameTag, type TagRow } from "./tags.owner.repository.ts";
import type * as routes from "./tags.owner.routes.ts";

function toTagObject(row: TagRow) {
  return { id: row.id, name: row.name, feature_count: row.feature_count };
}

/** 409 already_exists when another tag of the project is called `name` (ignoring case). */
async function assertNameFree(trx: Db, projectId: number, name: string, exceptId?: number): Promise<void> {
  const taken = await findTagByName(trx, projectId, name, exceptId);
  if (taken !== undefined) throw new ApiError("already_exists", `a tag named "${name}" already exists (id ${taken})`);
}

export const adminListTags: AppRouteHandler<typeof routes.adminListTags> = async (c) => {
  const query = c.req.valid("query");
  const { db } = c.get("deps");
  const projectId = c.get("project").id;
  const [total, rows] = await Promise.all([
    countTags(db, projectId),
    listTagsPage(db, projectId, { limit: query.per_page, offset: pageOffset(query) }),
  ]);
  return c.json(page(rows.map(toTagObject), pageMeta(query, total)), 200);
};

export const adminCreateTag: AppRouteHandler<typeof routes.adminCreateTag> = async (c) => {
  const { name } = c.req.valid("json");
  const projectId = c.get("project").id;
  const tag = await withProjectWriteLock(c.get("deps").db, c.get("project").id, async (trx) => {
    await lockProjectScope(trx, "tags", projectId);
    await assertNameFree(trx, projectId, name);
    const id = await insertTag(trx, projectId, name);
    return (await findTag(trx, projectId, id))!;
  });
  return c.json(success(toTagObject(tag)), 201);
};

export const adminUpdateTag: AppRouteHandler<typeof routes.adminUpdateTag> = async (c) => {
  const { tag_id } = c.req.valid("param");
  const patch = c.req.valid("json");
  const projectId = c.get("project").id;
  const tag = await withProjectWriteLock(c.get("deps").db, c.get("project").id, async (trx) => {
    await lockProjectScope(trx, "tags", projectId);
    if (!(await findTag(trx, projectId, tag_id))) throw notFound("tag");
    if (patch.name !== undefined) {
      await assertNameFree(trx, projectId, patch.name, tag_id);
      await renameTag(trx, projectId, tag_id, patch.name);
    }
    return (await findTag(trx, projectId, tag_id))!;
  });
  return c.json(success(toTagObject(tag)), 200);
};

export const adminDeleteTag: AppRouteHandler<typeof routes.adminDeleteTag> = async (c) => {
  const { tag_id } = c.req.valid("param");
  const deleted = await deleteTag(c.get("deps").db, c.get("project").id, tag_id);
  if (!deleted) throw notFound("tag");
  return c.json(success({ deleted: true as const, id: tag_id }), 200);
};
