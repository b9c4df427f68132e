/**
 * Voter SSO tokens (contract, "Authentication" 6): HS256 JWTs signed by the client's server
 * with the project's SSO secret. The algorithm is pinned (alg none, HS512 and RS256 are
 * refused), `exp` and `sub` are required, and 30 s of clock skew are tolerated.
 */
import { errors, jwtVerify } from "jose";
import { ApiError } from "../http/errors.ts";

export interface SsoClaims {
  /** The client's user id: the voter this token names. */
  sub: string;
  name: string | null;
  email: string | null;
}

const encoder = new TextEncoder();
const CLOCK_TOLERANCE_SECONDS = 30;

/**
 * Verifies `token` with `secret`; returns its claims or throws ApiError identity_invalid
 * (malformed, wrong signature, wrong algorithm, expired, not yet valid, no exp, no sub, or a
 * project without an SSO secret).
 */
export async function verifySsoToken(token: string, secret: string | null): Promise<SsoClaims> {
  if (!secret) throw new ApiError("identity_invalid", "this project does not accept SSO tokens");
  try {
    const { payload } = await jwtVerify(token, encoder.encode(secret), {
      algorithms: ["HS256"],
      requiredClaims: ["exp", "sub"],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
    });
    const sub = payload.sub;
    if (typeof sub !== "string" || sub.length === 0 || sub.length > 255) {
      throw new ApiError("identity_invalid", "SSO token sub must be a non-empty string");
    }
    const name = typeof payload.name === "string" && payload.name.trim() !== "" ? payload.name.trim().slice(0, 100) : null;
    const email = typeof payload.email === "string" ? payload.email.slice(0, 254) : null;
    return { sub, name, email };
  } catch (error) {
    if (error instanceof ApiError) throw error;
    const reason = error instanceof errors.JWTExpired ? "SSO token has expired" : "SSO token is malformed or its signature does not verify";
    throw new ApiError("identity_invalid", reason);
  }
}
