/**
 * Voter identity (contract, "Authentication" 5-8). X-VF-Token (an SSO JWT) outranks X-VF-Anon
 * (an anonymous token, looked up by digest within the project). Optional on reads; required on
 * writes (401 identity_required). A presented identity that is malformed, expired or minted for
 * another project answers 401 identity_invalid on reads and writes alike. An SSO token naming a
 * user never seen before creates that voter on a write and reads as "no votes yet" on a read.
 * The identity route resolves identities itself and is skipped here.
 */
import type { MiddlewareHandler } from "hono";
import type { AppDeps, AppEnv, VoterContext } from "../lib/context.ts";
import { projectCache } from "../lib/project-cache.ts";
import { ApiError } from "../lib/errors.ts";
import { hashSecret } from "../lib/secrets.ts";
import { verifySsoToken } from "../lib/sso.ts";
import { findAnonymousVoter, findSsoVoter, upsertSsoVoter } from "../routes/identity/identity.repository.ts";

const IDENTITY_PATH = /^\/api\/v3\/projects\/[^/]+\/identity\/?$/;

export function voterMiddleware(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.get("access") === "owner") {
      // Owner routes act for the project, not a voter: identity headers are ignored
      // (owner-api-v3.md, "Common rules"), and idempotency records are the owner's.
      c.set("voter", null);
      c.set("idempotencyScope", "owner");
      await next();
      return;
    }
    if (IDENTITY_PATH.test(c.req.path)) {
      // No voter yet: scope idempotency records by the presented token's digest instead.
      const presented = c.req.header("X-VF-Token") || c.req.header("X-VF-Anon");
      c.set("idempotencyScope", presented ? `token:${hashSecret(presented)}` : "none");
      await next();
      return;
    }
    const isWrite = c.req.method !== "GET" && c.req.method !== "HEAD";
    const voter = await resolveVoter(c.get("deps"), c.get("project"), {
      token: c.req.header("X-VF-Token"),
      anon: c.req.header("X-VF-Anon"),
      createSso: isWrite,
    });
    if (voter === undefined && isWrite) {
      throw new ApiError("identity_required", "send a voter identity in X-VF-Anon or X-VF-Token");
    }
    c.set("voter", voter ?? null);
    c.set("idempotencyScope", voter ? voter.publicId : "none");
    await next();
  };
}

/**
 * The voter of a write request. The voter middleware has already answered 401
 * identity_required when a write carries no identity, so this only narrows the type (and
 * keeps the promise should a route ever be mounted outside that middleware).
 */
export function requireVoter(voter: VoterContext | null): VoterContext {
  if (!voter) throw new ApiError("identity_required", "send a voter identity in X-VF-Anon or X-VF-Token");
  return voter;
}

/**
 * The voter named by the presented headers: undefined when none was sent, null for a valid SSO
 * token whose user has no voter yet (only when createSso is false). Throws identity_invalid.
 * Anonymous voters come through the project cache: their row changes only with an import, which
 * clears it (a token unknown a moment ago is looked up again, nothing negative is kept).
 */
export async function resolveVoter(
  deps: Pick<AppDeps, "db" | "config">,
  project: AppEnv["Variables"]["project"],
  presented: { token: string | undefined; anon: string | undefined; createSso: boolean },
): Promise<VoterContext | null | undefined> {
  if (presented.token !== undefined && presented.token !== "") {
    const claims = await verifySsoToken(presented.token, project.sso_secret);
    if (presented.createSso) return upsertSsoVoter(deps.db, project.id, claims, false);
    return (await findSsoVoter(deps.db, project.id, claims.sub)) ?? null;
  }
  if (presented.anon !== undefined && presented.anon !== "") {
    const digest = hashSecret(presented.anon);
    const voter = await projectCache(deps).remember(`anon-voter:${project.id}:${digest}`, () =>
      findAnonymousVoter(deps.db, project.id, digest),
    );
    if (!voter) throw new ApiError("identity_invalid", "the anonymous token is unknown to this project");
    return voter;
  }
  return undefined;
}
