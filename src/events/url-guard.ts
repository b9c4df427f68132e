/**
 * The SSRF guard of webhook URLs (owner-api-v3.md, "Webhooks"): a URL is refused when its host
 * resolves to any address that is not public unicast (private, loopback, link-local,
 * unique-local, carrier-grade NAT, multicast, unspecified, broadcast, reserved and documentation
 * ranges, and the IPv6 forms that embed an IPv4 address: IPv4-compatible, IPv4-translated,
 * NAT64, 6to4, Teredo, and IPv4-mapped unless the IPv4 address is public),
 * unless WEBHOOK_ALLOW_PRIVATE_URLS=true. Checked when a webhook is created or changed and again
 * at each delivery, which then connects to the very address checked (http-client.ts), so a name
 * that resolves differently a moment later (DNS rebinding) cannot slip through.
 * Ranges come from ipaddr.js: only its `unicast` class (no special range) is public, the
 * IPv4-compatible block `::/96` excepted (ipaddr.js counts it as unicast).
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

/** IPv4-compatible IPv6 addresses (RFC 4291 2.5.5.1, deprecated): `::a.b.c.d`. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR("::/96");

/**
 * The IPv4 address an IPv6 address carries in its low bits by one of the transition forms, and
 * the form's name: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`, RFC 6145),
 * IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96` and the local-use `64:ff9b:1::/48`, RFC
 * 6052 and 8215: the last 32 bits) and 6to4 (`2002:aabb:ccdd::/48`, RFC 3056: bits 16 to 47).
 * Null for any other address (`::` and `::1` included: they are themselves, not embeddings).
 */
export function embeddedIPv4(address: ipaddr.IPv6): { form: string; ipv4: ipaddr.IPv4 } | null {
  const range = address.range();
  const bytes = address.toByteArray();
  const ipv4At = (offset: number) => ipaddr.fromByteArray(bytes.slice(offset, offset + 4)) as ipaddr.IPv4;
  switch (range) {
    case "ipv4Mapped":
    case "rfc6145":
    case "rfc6052":
      return { form: range, ipv4: ipv4At(12) };
    case "6to4":
      return { form: range, ipv4: ipv4At(2) };
    case "unicast":
      return address.match(IPV4_COMPATIBLE) ? { form: "ipv4Compatible", ipv4: ipv4At(12) } : null;
    default:
      return null;
  }
}

/** `text`, an IPv6 address, as the WHATWG URL serializer writes it; null when it is not one. */
function canonicalIPv6(text: string): string | null {
  try {
    const host = new URL(`http://[${text}]/`).hostname;
    return host.slice(1, -1);
  } catch {
    return null;
  }
}

/**
 * The range name of `address` when it is not public unicast (e.g. "loopback", "private",
 * "ipv4Mapped loopback", "ipv4Compatible loopback", "6to4 private"), else null.
 * An IPv6 address that embeds an IPv4 address (embeddedIPv4) is named by its form and, when the
 * embedded address is not public, that address's range too. Only an IPv4-mapped address is judged
 * by its IPv4 address alone (a connection to it is an IPv4 connection); every other form is
 * refused whatever it embeds: IPv4-compatible addresses are deprecated and may be tunnelled to
 * the embedded address, and NAT64 and 6to4 gateways forward to it.
 */
export function nonPublicRange(address: string): string | null {
  if (!ipaddr.isValid(address)) return "invalid";
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6") {
    if ((parsed as ipaddr.IPv6).zoneId) return "zoned";
    // ipaddr.js reads the text `::a.b.c.d` (as resolvers print IPv4-compatible addresses) as
    // `::ffff:a.b.c.d`; the URL serializer (RFC 5952) writes each address in one form only.
    const canonical = canonicalIPv6(address);
    if (canonical === null) return "invalid";
    parsed = ipaddr.parse(canonical);
    const v6 = parsed as ipaddr.IPv6;
    const embedded = embeddedIPv4(v6);
    if (embedded !== null) {
      const inner = embedded.ipv4.range();
      if (embedded.form === "ipv4Mapped" && inner === "unicast") return null;
      return inner === "unicast" ? embedded.form : `${embedded.form} ${inner}`;
    }
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
