/**
 * Handlers of the owner's key routes, on the admin CLI's key management (src/routes/keys/keys.owner.repository.ts).
 * The old key's cached lookups are cleared on every instance by src/middleware/owner-change.ts
 * after the transaction commits and before the answer is sent (Rule 7).
 */

import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import { page, success } from "../../lib/http/envelope.ts";
import { pageMeta, pageOffset } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { type KeyRow, listKeys, replaceKeys } from "./keys.owner.repository.ts";
import type * as routes from "./keys.owner.routes.ts";
import type { KeyObject } from "./keys.owner.schemas.ts";

/** KeyObject from a key row; a key stored without a hint shows "" (docs/decisions.md, owner routes). */
function toKey(row: KeyRow): KeyObject {
  return { kind: row.kind, hint: row.hint ?? "", created_at: row.created_at.toISOString() };
}

export const adminListKeys: AppRouteHandler<typeof routes.adminListKeys> = async (c) => {
  const { page: pageNumber, per_page } = c.req.valid("query");
  const request = { page: pageNumber, per_page };
  // A project holds a handful of keys: read them all, page in memory.
  const rows = await listKeys(c.get("deps").db, c.get("project").id);
  const offset = pageOffset(request);
  return c.json(page(rows.slice(offset, offset + per_page).map(toKey), pageMeta(request, rows.length)), 200);
};

export const adminRegenerateKey: AppRouteHandler<typeof routes.adminRegenerateKey> = async (c) => {
  const { kind } = c.req.valid("json");
  const projectId = c.get("project").id;
  const created = await withProjectWriteLock(c.get("deps").db, projectId, (trx) => replaceKeys(trx, projectId, kind));
  return c.json(success({ ...toKey(created), key: created.key }), 201);
};
