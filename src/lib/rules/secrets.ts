/**
 * Secrets (API keys, anonymous voter tokens): random, prefixed by kind, stored only as SHA-256
 * hex digests and looked up by digest (docs/architecture.md, "Data rules"). Lookup by digest means the
 * database compares digests, never the plaintext; `safeEqual` covers in-process comparisons.
 */
import { hash, randomBytes, timingSafeEqual } from "node:crypto";

export type SecretKind = "secret" | "embed" | "anon";

const prefixes: Record<SecretKind, string> = { secret: "fb_sk_", embed: "fb_ek_", anon: "fb_anon_" };

/** A new random secret of the kind: prefix + 32 random bytes in base64url (43 characters). */
export function generateSecret(kind: SecretKind): string {
  return prefixes[kind] + randomBytes(32).toString("base64url");
}

/**
 * SHA-256 hex digest of a secret, as stored. Every keyed request hashes its key (and a write its
 * voter token): the one-shot crypto.hash, a third of createHash's cost on inputs this short.
 */
export function hashSecret(secret: string): string {
  return hash("sha256", secret, "hex");
}

/**
 * What KeyObject.hint shows of a key (owner-api-v3.md, "Objects"): its last 4 characters,
 * stored beside the digest when the key is made, since the key itself is never kept.
 */
export function keyHint(key: string): string {
  return key.slice(-4);
}

/** Constant-time string comparison (equal-length digests; different lengths are unequal). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A stable public voter id: "v_" + 16 random bytes in base64url. */
export function generateVoterId(): string {
  return `v_${randomBytes(16).toString("base64url")}`;
}
