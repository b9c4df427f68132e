/**
 * The bundled demo's keys are published (README), so they must never open a project reachable
 * from the network: they are honoured on loopback only, unless the operator asks for a public
 * sandbox with DEMO=public. The api-key middleware refuses them per request; the server replaces
 * them at start (src/admin/demo-bootstrap.ts).
 */
import ipaddr from "ipaddr.js";
import { hashSecret } from "./secrets.ts";

/** Secret key of the demo project (X-API-Key; opens the revenue routes too). */
export const DEMO_SECRET_KEY = "fb_sk_demo_lumen_secret_key_0001";
/** Embed key of the demo project; accepted from the origins in DEMO_ALLOWED_ORIGINS. */
export const DEMO_EMBED_KEY = "fb_ek_demo_lumen_embed_key_0001";

/**
 * Whether `host` (the HOST setting: an address or a name) listens on loopback only: `localhost`,
 * 127.0.0.0/8 and ::1 (also in brackets). Anything else, 0.0.0.0 and :: included, is reachable
 * from the network.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host
    .trim()
    .replace(/^\[(.*)\]$/, "$1")
    .toLowerCase();
  if (bare === "localhost") return true;
  if (!ipaddr.isValid(bare)) return false;
  const address = ipaddr.process(bare);
  return address.range() === "loopback";
}

/**
 * Whether the bundled demo's published keys may be served: only on loopback, unless the operator
 * asked for them with DEMO=public (a throwaway sandbox).
 */
export function wellKnownDemoKeysAllowed(config: { HOST: string; DEMO: string }): boolean {
  return config.DEMO === "public" || isLoopbackHost(config.HOST);
}

export const WELL_KNOWN_KEYS: { kind: "secret" | "embed"; digest: string }[] = [
  { kind: "secret", digest: hashSecret(DEMO_SECRET_KEY) },
  { kind: "embed", digest: hashSecret(DEMO_EMBED_KEY) },
];
export const WELL_KNOWN_DIGESTS = new Set(WELL_KNOWN_KEYS.map((key) => key.digest));

/**
 * Whether a presented key (its SHA-256 digest) must be refused as unknown: a published demo key
 * on a server whose HOST is off loopback (without DEMO=public). Catches a demo loaded while the
 * server runs (`npm run admin -- demo`), which the start-up replacement cannot see.
 */
export function isRefusedDemoKey(config: { HOST: string; DEMO: string }, digest: string): boolean {
  if (!WELL_KNOWN_DIGESTS.has(digest)) return false;
  return !wellKnownDemoKeysAllowed(config);
}
