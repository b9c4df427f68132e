/**
 * Handlers of the billing webhooks (owner-api-v3.md, "Billing sync"): budget -> raw body ->
 * vendor verification -> event reading -> one transaction under the project's write lock ->
 * a new content revision when a voter changed -> `{received: true}`.
 */
import type { Context } from "hono";
import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import type { AppDeps, AppEnv } from "../../lib/http/context.ts";
import { success } from "../../lib/http/envelope.ts";
import { ApiError } from "../../lib/http/errors.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { readPaddleEvent, verifyPaddleEvent } from "./billing.paddle.ts";
import { applyBillingChange, findBillingProject } from "./billing.repository.ts";
import type * as routes from "./billing.routes.ts";
import type { ReadEvent } from "./billing.schemas.ts";
import { readStripeEvent, verifyStripeEvent } from "./billing.stripe.ts";

const WINDOW_SECONDS = 60;

/**
 * Counts this delivery against the project's billing budget (RATE_LIMIT_BILLING_PER_MINUTE, one
 * budget for both systems, shared by every instance through the rate-limit store) and sets the
 * X-RateLimit-* headers; 429 rate_limited with Retry-After once it is spent. Keyed by the slug as
 * written, whether or not a project has it, so the answer is the same for unknown slugs.
 */
async function spendBudget(c: Context<AppEnv>, slug: string): Promise<void> {
  const { config, rateLimiter, now } = c.get("deps");
  const limit = config.RATE_LIMIT_BILLING_PER_MINUTE;
  const result = await rateLimiter.consume(`billing:${slug}`, limit, WINDOW_SECONDS);
  c.header("X-RateLimit-Limit", String(result.limit));
  c.header("X-RateLimit-Remaining", String(result.remaining));
  c.header("X-RateLimit-Reset", String(result.resetAt));
  if (!result.allowed) {
    const retryAfter = Math.max(1, Math.ceil(result.resetAt - now().getTime() / 1000));
    throw new ApiError("rate_limited", `the project's billing budget of ${limit} events a minute is spent`, {
      headers: { "Retry-After": String(retryAfter) },
    });
  }
}

/**
 * After a committed change: a new content revision of the project, so that every instance's
 * cached answers built before it are not served again (as contentRevisionMiddleware does for
 * keyed writes; these routes are outside that chain). Nothing the billing sync writes is among
 * the cached lookups (keys, settings, board structure, ban flags), so the lookups revision stays.
 */
async function announceChange(deps: AppDeps, projectId: number): Promise<void> {
  const bumped = await deps.contentRevisions.bump(projectId);
  if (!bumped) deps.caches.responses?.clear();
}

async function receive(c: Context<AppEnv>, slug: string, system: "stripe" | "paddle") {
  const deps = c.get("deps");
  await spendBudget(c, slug);
  const rawBody = await c.req.text();
  const project = await findBillingProject(deps.db, slug);
  const now = deps.now();
  // The vendors' SDKs judge a signature's age by the system clock (they take no clock), so the
  // bound ahead is judged by the same clock: both ends of the tolerance window on one clock.
  const receivedAt = new Date();
  let read: ReadEvent;
  if (system === "stripe") {
    const event = verifyStripeEvent(rawBody, c.req.header("Stripe-Signature"), project?.stripe_webhook_secret ?? null, receivedAt);
    read = readStripeEvent(event);
  } else {
    const event = await verifyPaddleEvent(rawBody, c.req.header("Paddle-Signature"), project?.paddle_webhook_secret ?? null, receivedAt);
    read = readPaddleEvent(event);
  }
  // A verified event implies a project with that secret.
  if (read.kind === "change" && project) {
    const { change } = read;
    const result = await withProjectWriteLock(deps.db, project.id, (trx) => applyBillingChange(trx, project, change, now));
    if (result.outcome === "applied" && result.votersWritten > 0) await announceChange(deps, project.id);
    deps.logger.info(
      { req_id: c.get("requestId"), system, event_id: change.eventId, event_type: change.eventType, ...result },
      "billing event",
    );
  } else if (read.kind === "ignored") {
    deps.logger.debug({ req_id: c.get("requestId"), system, reason: read.reason }, "billing event ignored");
  }
  return c.json(success({ received: true as const }), 200);
}

export const receiveStripeEvent: AppRouteHandler<typeof routes.receiveStripeEvent> = async (c) =>
  receive(c, c.req.valid("param").slug, "stripe");

export const receivePaddleEvent: AppRouteHandler<typeof routes.receivePaddleEvent> = async (c) =>
  receive(c, c.req.valid("param").slug, "paddle");
