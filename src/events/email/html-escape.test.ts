import { describe, expect, it } from "vitest";
import { escapeHtml } from "./html-escape.ts";

describe("escapeHtml", () => {
  it("replaces the five markup characters and nothing else", () => {
    expect(escapeHtml(`<script>alert("x" & 'y')</script>`)).toBe("&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;");
    expect(escapeHtml("Night theme – ünïcode 🌙 \n tab\t")).toBe("Night theme – ünïcode 🌙 \n tab\t");
  });

  it("escapes an existing reference again, so it shows as written", () => {
    expect(escapeHtml("&amp; &#60;")).toBe("&amp;amp; &amp;#60;");
  });

  it("leaves nothing that could close an attribute or open a tag", () => {
    for (const hostile of [`" onmouseover="x`, `' onload='x`, "<img src=x onerror=alert(1)>", "</a><a href=javascript:x>"]) {
      expect(escapeHtml(hostile)).not.toMatch(/[<>"']/);
    }
  });
});
