/**
 * The identity route (contract, "Taking part" rule 1; "Authentication" 6-8). The voter middleware
 * skips this path, so the presented tokens are read here: body values first, then headers, and an
 * SSO token outranks an anonymous one wherever each came from.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv, VoterContext } from "../../lib/context.ts";
import { success } from "../../lib/envelope.ts";
import { ApiError } from "../../lib/errors.ts";
import type { AppRouteHandler } from "../../lib/openapi.ts";
import { generateSecret, hashSecret } from "../../lib/secrets.ts";
import { verifySsoToken } from "../../lib/sso.ts";
import { createAnonymousVoter, findAnonymousVoter, listVotedFeatureIds, upsertSsoVoter } from "./identity.repository.ts";
import type * as routes from "./identity.routes.ts";

/** A header value, with an empty one treated as absent (as the voter middleware does). */
function headerToken(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

export const resolveIdentity: AppRouteHandler<typeof routes.resolveIdentity> = async (c) => {
  const body = c.req.valid("json") ?? {};
  const { db } = c.get("deps");
  const project = c.get("project");
  const ssoToken = body.sso_token ?? headerToken(c.req.header("X-VF-Token"));
  const anonToken = body.anon_token ?? headerToken(c.req.header("X-VF-Anon"));

  let voter: VoterContext;
  let created: boolean;
  let plaintext: string | null = null;
  if (ssoToken !== undefined) {
    const claims = await verifySsoToken(ssoToken, project.sso_secret);
    const upserted = await upsertSsoVoter(db, project.id, claims, true);
    ({ created, ...voter } = upserted);
  } else if (anonToken !== undefined) {
    const found = await findAnonymousVoter(db, project.id, hashSecret(anonToken));
    if (!found) throw new ApiError("identity_invalid", "the anonymous token is unknown to this project");
    voter = found;
    created = false;
    plaintext = anonToken;
    c.set("contentUnchanged", true);
  } else {
    // The plaintext exists only in this response; the database keeps its digest.
    plaintext = generateSecret("anon");
    voter = await createAnonymousVoter(db, project.id, hashSecret(plaintext));
    created = true;
    // A new anonymous voter shows in no read until it votes or comments (each a write of its
    // own): the project's cached reads stay valid. An SSO exchange may rename a comment author.
    c.set("contentUnchanged", true);
  }

  const identity = {
    voter_id: voter.publicId,
    kind: voter.kind,
    anon_token: voter.kind === "anonymous" ? plaintext : null,
    display_name: voter.displayName,
    banned: voter.banned,
    voted_feature_ids: await listVotedFeatureIds(db, voter.id),
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
    // hono caches the body promise per reader; its BodyCache type names methods, not promises.
    if (text.trim() === "") (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve("{}");
  }
  await next();
};
