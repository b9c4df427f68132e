/**
 * The SSRF guard of webhook URLs (owner-api-v3.md, "Webhooks"): a URL is refused when its host
 * resolves to any address that is not public unicast (private, loopback, link-local,
 * unique-local, carrier-grade NAT, multicast, unspecified, broadcast, reserved and documentation
 * ranges, and the IPv6 forms that embed an IPv4 address: IPv4-mapped, NAT64, 6to4, Teredo),
 * unless WEBHOOK_ALLOW_PRIVATE_URLS=true. Checked when a webhook is created or changed and again
 * at each delivery, which then connects to the very address checked (http-client.ts), so a name
 * that resolves differently a moment later (DNS rebinding) cannot slip through.
 * Ranges come from ipaddr.js: only its `unicast` class (no special range) is public.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/** One resolved address of a host, as dns.lookup gives it. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses (injectable for tests). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/**
 * The system resolver, as a connection would use it (hosts file included): every address of
 * `hostname`, IPv4 and IPv6.
 */
export const systemResolver: HostResolver = async (hostname) => {
  const found = await lookup(hostname, { all: true, verbatim: true });
  return found.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));
};

/** Why a URL is refused: `validation_failed` (its form) or `url_not_allowed` (where it leads). */
export class WebhookUrlRefused extends Error {
  constructor(
    readonly code: "validation_failed" | "url_not_allowed",
    message: string,
  ) {
    super(message);
    this.name = "WebhookUrlRefused";
  }
}

/**
 * The range name of `address` when it is not public unicast (e.g. "loopback", "private",
 * "ipv4Mapped loopback"), else null. An IPv4-mapped IPv6 address is judged by its IPv4 address.
 */
export function nonPublicRange(address: string): string | null {
  if (!ipaddr.isValid(address)) return "invalid";
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6") {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) {
      const inner = v6.toIPv4Address().range();
      return inner === "unicast" ? null : `ipv4Mapped ${inner}`;
    }
    if (v6.zoneId) return "zoned";
  }
  const range = parsed.range();
  return range === "unicast" ? null : range;
}

/** The host of `url` as a resolver or connection takes it (IPv6 literals without brackets). */
export function hostOf(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Parses and checks the form of a webhook URL: absolute, https (http too when `allowPrivate`),
 * no user name or password (they would be stored and shown in the clear; receivers
 * authenticate deliveries by their signature). Throws WebhookUrlRefused (validation_failed).
 */
export function parseWebhookUrl(text: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookUrlRefused("validation_failed", "must be an absolute URL");
  }
  const schemes = allowPrivate ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(url.protocol)) {
    throw new WebhookUrlRefused(
      "validation_failed",
      allowPrivate ? "must be an http or https URL" : "must be an https URL (http only where WEBHOOK_ALLOW_PRIVATE_URLS=true)",
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new WebhookUrlRefused("validation_failed", "must not carry a user name or password");
  }
  if (url.hostname === "") throw new WebhookUrlRefused("validation_failed", "must name a host");
  return url;
}

/**
 * Resolves the host of `url` and returns its addresses, every one of them checked to be public
 * unless `allowPrivate`. An IP literal is its own single address. Throws WebhookUrlRefused:
 * url_not_allowed when an address is not public, validation_failed when the name does not
 * resolve.
 */
export async function resolveWebhookHost(url: URL, options: { allowPrivate: boolean; resolve?: HostResolver }): Promise<ResolvedAddress[]> {
  const host = hostOf(url);
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  if (literal !== 0) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await (options.resolve ?? systemResolver)(host);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) throw new WebhookUrlRefused("validation_failed", `host ${host} does not resolve`);
  }
  if (options.allowPrivate) return addresses;
  for (const { address } of addresses) {
    const range = nonPublicRange(address);
    if (range !== null) {
      throw new WebhookUrlRefused("url_not_allowed", `host ${host} resolves to ${address} (${range}), not a public address`);
    }
  }
  return addresses;
}

/**
 * Checks a webhook URL as POST and PATCH /webhooks receive it: its form, then (unless
 * `allowPrivate`) where it resolves. Returns `text` as sent (stored so; every delivery parses
 * and checks it again); throws WebhookUrlRefused.
 */
export async function checkWebhookUrl(text: string, options: { allowPrivate: boolean; resolve?: HostResolver }): Promise<string> {
  const url = parseWebhookUrl(text, options.allowPrivate);
  if (!options.allowPrivate) await resolveWebhookHost(url, options);
  return text;
}
