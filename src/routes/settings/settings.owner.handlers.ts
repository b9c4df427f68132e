/** Handlers of the owner's settings routes: repository (one transaction per write) -> toSettings -> envelope. */

import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import { success } from "../../lib/http/envelope.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { toSettings } from "./settings.owner.mapper.ts";
import { readSettings, updateSettings } from "./settings.owner.repository.ts";
import type * as routes from "./settings.owner.routes.ts";

export const adminGetSettings: AppRouteHandler<typeof routes.adminGetSettings> = async (c) => {
  const row = await readSettings(c.get("deps").db, c.get("project").id);
  return c.json(success(toSettings(row)), 200);
};

export const adminUpdateSettings: AppRouteHandler<typeof routes.adminUpdateSettings> = async (c) => {
  const patch = c.req.valid("json");
  const { db, now } = c.get("deps");
  const projectId = c.get("project").id;
  const row = await withProjectWriteLock(db, projectId, (trx) => updateSettings(trx, projectId, patch, now()));
  return c.json(success(toSettings(row)), 200);
};
