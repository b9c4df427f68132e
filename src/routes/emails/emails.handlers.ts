/**
 * Handlers of the unsubscribe routes: verify the token (HMAC under the service's secret,
 * constant time, before any database read) -> repository -> envelope. Anything that does not
 * verify, and a verified token whose voter is gone, answers the same 404.
 */
import { serviceSecret } from "../../lib/data/service-secrets.ts";
import { success } from "../../lib/http/envelope.ts";
import { ApiError } from "../../lib/http/errors.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { verifyUnsubscribeToken } from "../../lib/rules/unsubscribe-token.ts";
import { readUnsubscribed, unsubscribe } from "./emails.repository.ts";
import type * as routes from "./emails.routes.ts";

const unknownToken = () => new ApiError("not_found", "no such unsubscribe link");

async function verified(db: Parameters<typeof serviceSecret>[0], token: string) {
  const names = verifyUnsubscribeToken(await serviceSecret(db, "unsubscribe"), token);
  if (!names) throw unknownToken();
  return names;
}

export const getUnsubscribe: AppRouteHandler<typeof routes.getUnsubscribe> = async (c) => {
  const { db } = c.get("deps");
  const { slug, voterPublicId } = await verified(db, c.req.valid("param").token);
  const unsubscribed = await readUnsubscribed(db, slug, voterPublicId);
  if (unsubscribed === undefined) throw unknownToken();
  // The state changes with a POST on the same URL: revalidate (ETag) rather than reuse for a minute.
  c.header("Cache-Control", "private, max-age=0");
  return c.json(success({ project: slug, unsubscribed }), 200);
};

export const postUnsubscribe: AppRouteHandler<typeof routes.postUnsubscribe> = async (c) => {
  const { db, now } = c.get("deps");
  const { slug, voterPublicId } = await verified(db, c.req.valid("param").token);
  if (!(await unsubscribe(db, slug, voterPublicId, now()))) throw unknownToken();
  return c.json(success({ project: slug, unsubscribed: true as const }), 200);
};
