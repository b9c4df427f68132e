/** Handlers of the owner's webhook routes: parse -> checks -> repository (one transaction per write) -> map -> envelope. */

import { attemptRecord, sendDelivery } from "../../events/attempt.ts";
import { recordAttempt } from "../../events/deliveries.repository.ts";
import { pingPayload } from "../../events/payload.ts";
import { generateWebhookSecret } from "../../events/signing.ts";
import { checkWebhookUrl, WebhookUrlRefused } from "../../events/url-guard.ts";
import { attemptOptions, leaseSeconds } from "../../events/webhook-worker.ts";
import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import { page, success } from "../../lib/http/envelope.ts";
import { ApiError } from "../../lib/http/errors.ts";
import { pageMeta } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { toDelivery, toWebhook, toWebhookWithSecret } from "./webhooks.owner.mapper.ts";
import {
  createWebhook,
  deleteWebhook,
  findDelivery,
  findWebhook,
  insertClaimedPing,
  listDeliveries,
  listWebhooks,
  redeliver,
  rotateWebhookSecret,
  updateWebhook,
  webhookSigningRow,
} from "./webhooks.owner.repository.ts";
import type * as routes from "./webhooks.owner.routes.ts";

const webhookNotFound = () => new ApiError("not_found", "no webhook with this id in the project");

/** The URL after the SSRF guard, or the 422 it earns (naming `url`). */
async function checkedUrl(url: string, allowPrivate: boolean): Promise<string> {
  try {
    return await checkWebhookUrl(url, { allowPrivate });
  } catch (error) {
    if (error instanceof WebhookUrlRefused) throw new ApiError(error.code, `url: ${error.message}`, { field: "url" });
    throw error;
  }
}

export const adminListWebhooks: AppRouteHandler<typeof routes.adminListWebhooks> = async (c) => {
  const { page: pageNumber, per_page } = c.req.valid("query");
  const request = { page: pageNumber, per_page };
  const { rows, total } = await listWebhooks(c.get("deps").db, c.get("project").id, request);
  return c.json(page(rows.map(toWebhook), pageMeta(request, total)), 200);
};

export const adminCreateWebhook: AppRouteHandler<typeof routes.adminCreateWebhook> = async (c) => {
  const input = c.req.valid("json");
  const deps = c.get("deps");
  const projectId = c.get("project").id;
  const url = await checkedUrl(input.url, deps.config.WEBHOOK_ALLOW_PRIVATE_URLS);
  const secret = generateWebhookSecret();
  const row = await withProjectWriteLock(deps.db, projectId, (trx) => createWebhook(trx, projectId, { ...input, url }, secret));
  c.set("contentUnchanged", true);
  return c.json(success(toWebhookWithSecret(row, secret)), 201);
};

export const adminGetWebhook: AppRouteHandler<typeof routes.adminGetWebhook> = async (c) => {
  const { webhook_id } = c.req.valid("param");
  const row = await findWebhook(c.get("deps").db, c.get("project").id, webhook_id);
  if (!row) throw webhookNotFound();
  return c.json(success(toWebhook(row)), 200);
};

export const adminUpdateWebhook: AppRouteHandler<typeof routes.adminUpdateWebhook> = async (c) => {
  const patch = c.req.valid("json");
  const deps = c.get("deps");
  const projectId = c.get("project").id;
  const { webhook_id } = c.req.valid("param");
  // A webhook of another project is not found before its URL is judged.
  if (!(await findWebhook(deps.db, projectId, webhook_id))) throw webhookNotFound();
  const checked = patch.url === undefined ? patch : { ...patch, url: await checkedUrl(patch.url, deps.config.WEBHOOK_ALLOW_PRIVATE_URLS) };
  const row = await withProjectWriteLock(deps.db, projectId, (trx) => updateWebhook(trx, projectId, webhook_id, checked));
  if (!row) throw webhookNotFound();
  c.set("contentUnchanged", true);
  return c.json(success(toWebhook(row)), 200);
};

export const adminDeleteWebhook: AppRouteHandler<typeof routes.adminDeleteWebhook> = async (c) => {
  const { webhook_id } = c.req.valid("param");
  const projectId = c.get("project").id;
  const deleted = await withProjectWriteLock(c.get("deps").db, projectId, (trx) => deleteWebhook(trx, projectId, webhook_id));
  if (!deleted) throw webhookNotFound();
  c.set("contentUnchanged", true);
  return c.json(success({ deleted: true as const, id: webhook_id }), 200);
};

export const adminRotateWebhookSecret: AppRouteHandler<typeof routes.adminRotateWebhookSecret> = async (c) => {
  const { webhook_id } = c.req.valid("param");
  const projectId = c.get("project").id;
  const secret = generateWebhookSecret();
  const row = await withProjectWriteLock(c.get("deps").db, projectId, (trx) => rotateWebhookSecret(trx, projectId, webhook_id, secret));
  if (!row) throw webhookNotFound();
  c.set("contentUnchanged", true);
  return c.json(success(toWebhookWithSecret(row, secret)), 200);
};

/**
 * POST test: a ping (an EventObject of type ping with an `evt_` id, owner-api-v3.md "Events"),
 * attempted once here (not by the worker) so the answer can carry its outcome. The delivery row is inserted already claimed and committed before the request, like
 * a worker's claim, and its outcome is recorded the same way (a 410 disables the webhook).
 */
export const adminTestWebhook: AppRouteHandler<typeof routes.adminTestWebhook> = async (c) => {
  const { webhook_id } = c.req.valid("param");
  const deps = c.get("deps");
  const project = c.get("project");
  const webhook = await findWebhook(deps.db, project.id, webhook_id);
  if (!webhook) throw webhookNotFound();
  const claim = await withProjectWriteLock(deps.db, project.id, (trx) => insertClaimedPing(trx, webhook_id, leaseSeconds(deps.config)));
  // An EventObject of type ping: its evt_ id is also the webhook-id header (signDelivery).
  const body = JSON.stringify(pingPayload(claim.event_id, claim.created_at, project.slug, webhook));
  const signing = await webhookSigningRow(deps.db, webhook_id);
  const options = attemptOptions(deps.config);
  if (signing) {
    const delivery = { ...claim, webhook_id, event_type: "ping", body, attempts: 1, ...signing };
    const { response, durationMs } = await sendDelivery(delivery, options);
    await recordAttempt(deps.db, claim.id, claim.claim_token, attemptRecord(delivery, response, durationMs, options), options);
  }
  const row = await findDelivery(deps.db, webhook_id, Number(claim.id));
  // Deleted while the ping was under way: the delivery went with it.
  if (!row) throw webhookNotFound();
  c.set("contentUnchanged", true);
  return c.json(success(toDelivery(row)), 200);
};

export const adminListDeliveries: AppRouteHandler<typeof routes.adminListDeliveries> = async (c) => {
  const { webhook_id } = c.req.valid("param");
  const { status, page: pageNumber, per_page } = c.req.valid("query");
  const db = c.get("deps").db;
  if (!(await findWebhook(db, c.get("project").id, webhook_id))) throw webhookNotFound();
  const request = { page: pageNumber, per_page };
  const { rows, total } = await listDeliveries(db, webhook_id, status, request);
  return c.json(page(rows.map(toDelivery), pageMeta(request, total)), 200);
};

export const adminRedeliver: AppRouteHandler<typeof routes.adminRedeliver> = async (c) => {
  const { webhook_id, delivery_id } = c.req.valid("param");
  const projectId = c.get("project").id;
  const row = await withProjectWriteLock(c.get("deps").db, projectId, async (trx) => {
    if (!(await findWebhook(trx, projectId, webhook_id))) throw webhookNotFound();
    return redeliver(trx, webhook_id, delivery_id);
  });
  if (!row) throw new ApiError("not_found", "no delivery with this id for this webhook");
  c.set("contentUnchanged", true);
  return c.json(success(toDelivery(row)), 202);
};
