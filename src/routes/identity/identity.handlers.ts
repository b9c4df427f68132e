/**
 * The identity route (contract, "Taking part" rule 1; "Authentication" 6-8). The voter middleware
 * skips this path, so the presented tokens are read here: body values first, then headers, and an
 * SSO token outranks an anonymous one wherever each came from.
 */
import type { MiddlewareHandler } from "hono";
import { exchangeIdentity } from "../../lib/data/resolution.ts";
import type { AppEnv } from "../../lib/http/context.ts";
import { success } from "../../lib/http/envelope.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { replaceBodyText } from "../../lib/runtime/runtime-adapter.ts";
import { listVotedFeatureIds } from "./identity.repository.ts";
import type * as routes from "./identity.routes.ts";

export const resolveIdentity: AppRouteHandler<typeof routes.resolveIdentity> = async (c) => {
  const body = c.req.valid("json") ?? {};
  const deps = c.get("deps");
  const { voter, created, anonToken, contentUnchanged } = await exchangeIdentity(deps, c.get("project"), {
    ssoToken: body.sso_token ?? c.req.header("X-VF-Token"),
    anonToken: body.anon_token ?? c.req.header("X-VF-Anon"),
  });
  if (contentUnchanged) c.set("contentUnchanged", true);
  const identity = {
    voter_id: voter.publicId,
    kind: voter.kind,
    anon_token: voter.kind === "anonymous" ? anonToken : null,
    display_name: voter.displayName,
    banned: voter.banned,
    voted_feature_ids: await listVotedFeatureIds(deps.db, voter.id),
  };
  return created ? c.json(success(identity), 201) : c.json(success(identity), 200);
};

/**
 * The body is optional: an empty body sent with Content-Type application/json is read as {}
 * instead of failing as malformed JSON in the validator.
 */
export const emptyBodyAsObject: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.method === "POST" && /json/i.test(c.req.header("Content-Type") ?? "")) {
    const text = await c.req.text();
    if (text.trim() === "") replaceBodyText(c, "{}");
  }
  await next();
};
