/**
 * The SSRF guard (owner-api-v3.md, "Webhooks"): every non-public address class is refused, in
 * IPv4, IPv6 and every IPv6 form that embeds an IPv4 address (IPv4-mapped, IPv4-compatible,
 * IPv4-translated, NAT64, 6to4), whichever of a name's addresses it is; http and credentials
 * are refused unless allowed; WEBHOOK_ALLOW_PRIVATE_URLS lets everything through. Names are
 * resolved by an injected resolver.
 */
import { describe, expect, it } from "vitest";
import { checkWebhookUrl, type HostResolver, nonPublicRange, WebhookUrlRefused } from "./url-guard.ts";

const resolverOf =
  (table: Record<string, string[]>): HostResolver =>
  async (host) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };

async function refusal(url: string, resolve: HostResolver = resolverOf({}), allowPrivate = false) {
  try {
    await checkWebhookUrl(url, { allowPrivate, resolve });
  } catch (error) {
    if (error instanceof WebhookUrlRefused) return { code: error.code, message: error.message };
    throw error;
  }
  return null;
}

describe("nonPublicRange", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["0.0.0.0", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "linkLocal"],
    ["fc00::1", "uniqueLocal"],
    ["fd12:3456::1", "uniqueLocal"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "ipv4Mapped loopback"],
    ["::ffff:10.0.0.1", "ipv4Mapped private"],
    ["::ffff:169.254.169.254", "ipv4Mapped linkLocal"],
    ["64:ff9b::a00:1", "rfc6052 private"],
    ["2002:a00:1::", "6to4 private"],
    ["2001::1", "teredo"],
  ])("%s is %s", (address, range) => {
    expect(nonPublicRange(address)).toBe(range);
  });

  // IPv6 forms that embed an IPv4 address are named by the form and the embedded address's range.
  it.each([
    // IPv4-compatible (deprecated), in both the URL's and a resolver's spelling.
    ["::127.0.0.1", "ipv4Compatible loopback"],
    ["::7f00:1", "ipv4Compatible loopback"],
    ["::10.0.0.1", "ipv4Compatible private"],
    ["::c0a8:101", "ipv4Compatible private"],
    ["::169.254.169.254", "ipv4Compatible linkLocal"],
    ["::93.184.216.34", "ipv4Compatible"],
    // IPv4-mapped and IPv4-translated.
    ["::ffff:a9fe:a9fe", "ipv4Mapped linkLocal"],
    ["::ffff:0:127.0.0.1", "rfc6145 loopback"],
    // NAT64, the well-known and the local-use prefix.
    ["64:ff9b::127.0.0.1", "rfc6052 loopback"],
    ["64:ff9b::7f00:1", "rfc6052 loopback"],
    ["64:ff9b::192.168.1.1", "rfc6052 private"],
    ["64:ff9b::a9fe:a9fe", "rfc6052 linkLocal"],
    ["64:ff9b:1::a00:1", "rfc6052 private"],
    ["64:ff9b::5db8:d822", "rfc6052"],
    // 6to4: the IPv4 address is bits 16 to 47.
    ["2002:7f00:1::1", "6to4 loopback"],
    ["2002:c0a8:101::", "6to4 private"],
    ["2002:a9fe:a9fe:1::5", "6to4 linkLocal"],
    ["2002:5db8:d822::1", "6to4"],
  ])("%s is %s", (address, range) => {
    expect(nonPublicRange(address)).toBe(range);
  });

  it.each(["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:93.184.216.34"])("%s is public", (address) => {
    expect(nonPublicRange(address)).toBeNull();
  });
});

describe("checkWebhookUrl", () => {
  const resolve = resolverOf({
    "hooks.example.com": ["93.184.216.34", "2606:4700:4700::1111"],
    "internal.example.com": ["10.0.0.5"],
    "mixed.example.com": ["93.184.216.34", "127.0.0.1"],
    "metadata.example.com": ["169.254.169.254"],
    "v6local.example.com": ["fd00::1"],
    "mapped.example.com": ["::ffff:192.168.0.10"],
    "compatible.example.com": ["::127.0.0.1"],
    "compatible-hex.example.com": ["93.184.216.34", "::a00:5"],
    "nat64.example.com": ["64:ff9b::a9fe:a9fe"],
    "sixtofour.example.com": ["2002:c0a8:10a::1"],
  });

  it("accepts an https URL whose every address is public, unchanged", async () => {
    await expect(checkWebhookUrl("https://hooks.example.com/in?x=1", { allowPrivate: false, resolve })).resolves.toBe(
      "https://hooks.example.com/in?x=1",
    );
  });

  it.each([
    ["https://internal.example.com/", "10.0.0.5"],
    ["https://mixed.example.com/", "127.0.0.1"],
    ["https://metadata.example.com/latest", "169.254.169.254"],
    ["https://v6local.example.com/", "fd00::1"],
    ["https://mapped.example.com/", "::ffff:192.168.0.10"],
    ["https://127.0.0.1/", "127.0.0.1"],
    ["https://2130706433/", "127.0.0.1"],
    ["https://0x7f.1/", "127.0.0.1"],
    ["https://[::1]:8443/", "::1"],
    ["https://[::ffff:7f00:1]/", "::ffff:7f00:1"],
    ["https://10.0.0.1/", "10.0.0.1"],
    ["https://[::127.0.0.1]/", "::7f00:1"],
    ["https://[::7f00:1]:8443/hook", "::7f00:1"],
    ["https://[::10.0.0.1]/", "::a00:1"],
    ["https://[::169.254.169.254]/latest", "::a9fe:a9fe"],
    ["https://[::ffff:0:127.0.0.1]/", "::ffff:0:7f00:1"],
    ["https://[64:ff9b::127.0.0.1]/", "64:ff9b::7f00:1"],
    ["https://[64:ff9b::10.1.2.3]/", "64:ff9b::a01:203"],
    ["https://[2002:7f00:1::1]/", "2002:7f00:1::1"],
    ["https://[2002:a9fe:a9fe::]/", "2002:a9fe:a9fe::"],
    ["https://compatible.example.com/", "::127.0.0.1"],
    ["https://compatible-hex.example.com/", "::a00:5"],
    ["https://nat64.example.com/", "64:ff9b::a9fe:a9fe"],
    ["https://sixtofour.example.com/", "2002:c0a8:10a::1"],
  ])("refuses %s (resolves to %s) with url_not_allowed", async (url, address) => {
    const refused = await refusal(url, resolve);
    expect(refused?.code).toBe("url_not_allowed");
    expect(refused?.message).toContain(address);
  });

  it.each([
    ["http://hooks.example.com/", "https"],
    ["ftp://hooks.example.com/", "https"],
    ["not a url", "absolute"],
    ["https://user:pw@hooks.example.com/", "password"],
    ["https://nowhere.example.com/", "does not resolve"],
  ])("refuses %s with validation_failed", async (url, words) => {
    const refused = await refusal(url, resolve);
    expect(refused?.code).toBe("validation_failed");
    expect(refused?.message).toContain(words);
  });

  it("lets http and private addresses through when WEBHOOK_ALLOW_PRIVATE_URLS=true", async () => {
    expect(await refusal("http://127.0.0.1:8080/hook", resolve, true)).toBeNull();
    expect(await refusal("https://internal.example.com/", resolve, true)).toBeNull();
    expect((await refusal("ftp://127.0.0.1/", resolve, true))?.code).toBe("validation_failed");
  });
});
