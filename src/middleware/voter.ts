/**
 * Voter identity (contract, "Authentication" 5-8). X-VF-Token (an SSO JWT) outranks X-VF-Anon
 * (an anonymous token, looked up by digest within the project). Optional on reads; required on
 * writes (401 identity_required). A presented identity that is malformed, expired or minted for
 * another project answers 401 identity_invalid on reads and writes alike. An SSO token naming a
 * user never seen before creates that voter on a write and reads as "no votes yet" on a read.
 * The identity route (access "identity", marked in src/app.ts) resolves identities itself
 * through the same service (src/lib/data/resolution.ts) and is skipped here.
 */
import type { MiddlewareHandler } from "hono";
import { resolveVoter } from "../lib/data/resolution.ts";
import type { AppEnv, VoterContext } from "../lib/http/context.ts";
import { ApiError } from "../lib/http/errors.ts";
import { hashSecret } from "../lib/rules/secrets.ts";

export function voterMiddleware(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const access = c.get("access");
    if (access === "owner") {
      // Owner routes act for the project, not a voter: identity headers are ignored
      // (owner-api-v3.md, "Common rules"), and idempotency records are the owner's.
      c.set("voter", null);
      c.set("idempotencyScope", "owner");
      await next();
      return;
    }
    if (access === "identity") {
      // No voter yet: scope idempotency records by the presented token's digest instead.
      const presented = c.req.header("X-VF-Token") || c.req.header("X-VF-Anon");
      c.set("idempotencyScope", presented ? `token:${hashSecret(presented)}` : "none");
      await next();
      return;
    }
    const isWrite = c.req.method !== "GET" && c.req.method !== "HEAD";
    const voter = await resolveVoter(
      c.get("deps"),
      c.get("project"),
      { ssoToken: c.req.header("X-VF-Token"), anonToken: c.req.header("X-VF-Anon") },
      { createSso: isWrite },
    );
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
