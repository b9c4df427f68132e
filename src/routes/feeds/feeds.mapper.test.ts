/** The feeds' base address and text rules (engagement-api-v3.md, "Common rules" and "Feeds"). */
import { describe, expect, it } from "vitest";
import type { AppDeps } from "../../lib/http/context.ts";
import { publicBaseUrl } from "./feeds.handlers.ts";
import { escapeHtml, xmlText } from "./feeds.mapper.ts";

type Config = AppDeps["config"];
const configOf = (fields: Record<string, unknown>): Config => ({ HOST: "127.0.0.1", PORT: 8080, ...fields }) as unknown as Config;

describe("publicBaseUrl", () => {
  it("is PUBLIC_BASE_URL without its trailing slash when configured", () => {
    const config = configOf({ PUBLIC_BASE_URL: "https://board.example.com/" });
    expect(publicBaseUrl(config)).toBe("https://board.example.com");
  });

  it("defaults to http://{HOST}:{PORT}, an IPv6 host in brackets", () => {
    expect(publicBaseUrl(configOf({ HOST: "127.0.0.1", PORT: 8080 }))).toBe("http://127.0.0.1:8080");
    expect(publicBaseUrl(configOf({ HOST: "::1", PORT: 9000 }))).toBe("http://[::1]:9000");
  });
});

describe("board texts", () => {
  it("drops what XML 1.0 cannot hold and keeps everything else", () => {
    expect(xmlText("a\u0000b\u0001c\u0008d\u000be\u001ff\ufffeg\uffffh\ud800i\tj\nk\rl")).toBe("abcdefghi\tj\nk\rl");
    expect(xmlText("😀 é \ue000 \ufffd")).toBe("😀 é \ue000 \ufffd");
  });

  it("escapes HTML's five special characters", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  });
});
