/**
 * Unsubscribe tokens (engagement-api-v3.md, "Email notifications", "Unsubscribe"): a token names
 * one voter of one project, is signed by the service and does not expire. Form:
 * `{project slug}.{voter public id}.{MAC}`, where MAC is the base64url HMAC-SHA256 (43
 * characters) of both names under the service's `unsubscribe` secret (service_secrets, shared
 * by every instance through the database). Neither name may hold a dot (slugs: a-z 0-9 -;
 * voter ids: A-Z a-z 0-9 _ -), so the split is unambiguous. A token is not a key or an
 * identity: it only opens the two unsubscribe routes.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** Longest token accepted: a 63-character slug, a 64-character voter id, the MAC and two dots. */
export const MAX_UNSUBSCRIBE_TOKEN_LENGTH = 63 + 64 + 43 + 2;

const DOMAIN = "feedback-board/unsubscribe/1";
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

function mac(secret: string, slug: string, voterPublicId: string): Buffer {
  return createHmac("sha256", secret).update(`${DOMAIN}\n${slug}\n${voterPublicId}`).digest();
}

/** The token of voter `voterPublicId` of project `slug` under `secret`. */
export function signUnsubscribeToken(secret: string, slug: string, voterPublicId: string): string {
  return `${slug}.${voterPublicId}.${mac(secret, slug, voterPublicId).toString("base64url")}`;
}

/**
 * The project slug and voter public id `token` names when its MAC is the service's (compared in
 * constant time); undefined for anything else (malformed, altered, signed with another secret).
 */
export function verifyUnsubscribeToken(secret: string, token: string): { slug: string; voterPublicId: string } | undefined {
  if (token.length > MAX_UNSUBSCRIBE_TOKEN_LENGTH) return undefined;
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  const [slug, voterPublicId, given] = parts as [string, string, string];
  if (!NAME.test(slug) || !NAME.test(voterPublicId) || !/^[A-Za-z0-9_-]{43}$/.test(given)) return undefined;
  // The canonical text is compared, not the decoded bytes: the last character carries two spare
  // bits, so four spellings decode alike and an altered token must not verify.
  const expected = Buffer.from(mac(secret, slug, voterPublicId).toString("base64url"));
  const received = Buffer.from(given);
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) return undefined;
  return { slug, voterPublicId };
}
