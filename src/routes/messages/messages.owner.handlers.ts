/** Handlers of the owner message routes (owner-api-v3.md, Routes /messages; Rule 5). */
import semver from "semver";
import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import { page, success } from "../../lib/http/envelope.ts";
import { notFound, validationError } from "../../lib/http/errors.ts";
import { pageMeta, pageOffset } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { toAdminMessageObject } from "./messages.mapper.ts";
import {
  countMessages,
  deleteMessage,
  findAdminMessage,
  insertMessage,
  listAdminMessages,
  lockMessage,
  updateMessage,
} from "./messages.owner.repository.ts";
import type * as routes from "./messages.owner.routes.ts";

interface CrossFieldState {
  action_label: string | null;
  action_url: string | null;
  min_app_version: string | null;
  max_app_version: string | null;
  starts_at: string | Date | null;
  ends_at: string | Date | null;
}

/**
 * Rule 5 (and the snapshot importer's message rules) on the message as it will be stored:
 * action_label needs action_url; min_app_version <= max_app_version; starts_at <= ends_at.
 */
export function checkMessageRules(state: CrossFieldState): void {
  if (state.action_label !== null && state.action_url === null) {
    throw validationError("action_url", "action_url: required when action_label is set");
  }
  if (state.min_app_version !== null && state.max_app_version !== null && semver.gt(state.min_app_version, state.max_app_version)) {
    throw validationError("min_app_version", `min_app_version: above max_app_version (${state.max_app_version})`);
  }
  if (state.starts_at !== null && state.ends_at !== null && new Date(state.ends_at).getTime() < new Date(state.starts_at).getTime()) {
    throw validationError("ends_at", "ends_at: before starts_at");
  }
}

export const adminListMessages: AppRouteHandler<typeof routes.adminListMessages> = async (c) => {
  const query = c.req.valid("query");
  const { db } = c.get("deps");
  const projectId = c.get("project").id;
  const [total, rows] = await Promise.all([
    countMessages(db, projectId),
    listAdminMessages(db, projectId, { limit: query.per_page, offset: pageOffset(query) }),
  ]);
  return c.json(page(rows.map(toAdminMessageObject), pageMeta(query, total)), 200);
};

export const adminGetMessage: AppRouteHandler<typeof routes.adminGetMessage> = async (c) => {
  const { id } = c.req.valid("param");
  const row = await findAdminMessage(c.get("deps").db, c.get("project").id, id);
  if (!row) throw notFound("message");
  return c.json(success(toAdminMessageObject(row)), 200);
};

export const adminCreateMessage: AppRouteHandler<typeof routes.adminCreateMessage> = async (c) => {
  const values = c.req.valid("json");
  checkMessageRules(values);
  const projectId = c.get("project").id;
  const row = await withProjectWriteLock(c.get("deps").db, c.get("project").id, async (trx) => {
    const id = await insertMessage(trx, { ...values, project_id: projectId });
    return (await findAdminMessage(trx, projectId, id))!;
  });
  return c.json(success(toAdminMessageObject(row)), 201);
};

export const adminUpdateMessage: AppRouteHandler<typeof routes.adminUpdateMessage> = async (c) => {
  const { id } = c.req.valid("param");
  const patch = c.req.valid("json");
  const projectId = c.get("project").id;
  const row = await withProjectWriteLock(c.get("deps").db, c.get("project").id, async (trx) => {
    // Locked so that two PATCHes judged against the same old state cannot together break a rule.
    const current = await lockMessage(trx, projectId, id);
    if (!current) throw notFound("message");
    checkMessageRules({ ...current, ...patch });
    await updateMessage(trx, id, patch);
    return (await findAdminMessage(trx, projectId, id))!;
  });
  return c.json(success(toAdminMessageObject(row)), 200);
};

export const adminDeleteMessage: AppRouteHandler<typeof routes.adminDeleteMessage> = async (c) => {
  const { id } = c.req.valid("param");
  if (!(await deleteMessage(c.get("deps").db, c.get("project").id, id))) throw notFound("message");
  return c.json(success({ deleted: true as const, id }), 200);
};
