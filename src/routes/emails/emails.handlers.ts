/**
 * Handlers of the unsubscribe routes: verify the token (HMAC under the service's secret,
 * constant time, before any database read) -> repository -> envelope, or the HTML page when
 * the request's Accept header prefers text/html to application/json (a person following the
 * link; engagement-api-v3.md, "Unsubscribe"). Anything that does not verify, and a verified
 * token whose voter is gone, answers the same 404 (JSON, as every error).
 */
import type { Context } from "hono";
import { serviceSecret } from "../../lib/data/service-secrets.ts";
import type { AppEnv } from "../../lib/http/context.ts";
import { success } from "../../lib/http/envelope.ts";
import { ApiError } from "../../lib/http/errors.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { verifyUnsubscribeToken } from "../../lib/rules/unsubscribe-token.ts";
import { readUnsubscribed, unsubscribe } from "./emails.repository.ts";
import type * as routes from "./emails.routes.ts";
import { prefersHtml, UNSUBSCRIBE_PAGE_CSP, unsubscribePage } from "./unsubscribe-page.ts";

const unknownToken = () => new ApiError("not_found", "no such unsubscribe link");

async function verified(db: Parameters<typeof serviceSecret>[0], token: string) {
  const names = verifyUnsubscribeToken(await serviceSecret(db, "unsubscribe"), token);
  if (!names) throw unknownToken();
  return names;
}

/**
 * Whether a POST body is the RFC 8058 one-click form (`List-Unsubscribe=One-Click`, url-encoded
 * or multipart), which mail clients send and which answers JSON whatever its Accept header.
 */
async function isOneClick(c: Context<AppEnv>): Promise<boolean> {
  try {
    const form = await c.req.parseBody();
    return form["List-Unsubscribe"] === "One-Click";
  } catch {
    // A body that is no form is not the one-click form.
    return false;
  }
}

/** The page's headers: its own policy, and Vary: Accept since one address answers JSON or HTML. */
function pageHeaders(): Record<string, string> {
  return {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": UNSUBSCRIBE_PAGE_CSP,
    "Cache-Control": "private, no-store",
    Vary: "Origin, Accept",
  };
}

export const getUnsubscribe: AppRouteHandler<typeof routes.getUnsubscribe> = async (c) => {
  const { db } = c.get("deps");
  const { slug, voterPublicId } = await verified(db, c.req.valid("param").token);
  const state = await readUnsubscribed(db, slug, voterPublicId);
  if (state === undefined) throw unknownToken();
  if (prefersHtml(c.req.header("Accept"))) {
    return c.body(unsubscribePage({ projectName: state.projectName, unsubscribed: state.unsubscribed, method: "GET" }), 200, pageHeaders());
  }
  // The state changes with a POST on the same URL: revalidate (ETag) rather than reuse for a minute.
  c.header("Cache-Control", "private, max-age=0");
  c.header("Vary", "Origin, Accept");
  return c.json(success({ project: slug, unsubscribed: state.unsubscribed }), 200);
};

export const postUnsubscribe: AppRouteHandler<typeof routes.postUnsubscribe> = async (c) => {
  const { db, now } = c.get("deps");
  const { slug, voterPublicId } = await verified(db, c.req.valid("param").token);
  const html = prefersHtml(c.req.header("Accept")) && !(await isOneClick(c));
  if (!(await unsubscribe(db, slug, voterPublicId, now()))) throw unknownToken();
  c.header("Vary", "Origin, Accept");
  if (html) {
    const state = await readUnsubscribed(db, slug, voterPublicId);
    if (state === undefined) throw unknownToken();
    return c.body(
      unsubscribePage({ projectName: state.projectName, unsubscribed: state.unsubscribed, method: "POST" }),
      200,
      pageHeaders(),
    );
  }
  return c.json(success({ project: slug, unsubscribed: true as const }), 200);
};
