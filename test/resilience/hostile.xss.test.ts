/**
 * Stored XSS through release notes (OWASP API8 security misconfiguration / API10 unsafe
 * consumption): a corpus of markdown attacks imported as release bodies, then served as
 * ReleaseObject.body_html on the changelog list and detail. Parsed with jsdom, no body may hold
 * an executable element, an on* handler, or a URL attribute with a javascript:, vbscript: or
 * data: scheme (after the decoding and whitespace stripping a browser does).
 */
import { JSDOM } from "jsdom";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type ImportedProject, type TestContext } from "../support/harness.ts";
import { idsOf } from "./support/seed.ts";
import { recordCount } from "./support/tally.ts";

// biome-ignore lint/suspicious/noExportsInTest: the XSS corpus and its checker are shared with the other hostile-input suites
export const XSS_CORPUS: string[] = [
  "<script>alert(1)</script>",
  "Text <script src=//evil.example/x.js></script> more",
  "<img src=x onerror=alert(1)>",
  'Inline <img src="x" onerror="alert(1)"/> image',
  "<svg onload=alert(1)>",
  "<svg><script>alert(1)</script></svg>",
  "<details open ontoggle=alert(1)>",
  '"><script>alert(1)</script>',
  '<a href="javascript:alert(1)">x</a>',
  '<a href=" &#14;  javascript:alert(1)">x</a>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
  '<object data="javascript:alert(1)"></object>',
  '<embed src="javascript:alert(1)">',
  '<form action="javascript:alert(1)"><button>x</button></form>',
  '<button formaction="javascript:alert(1)">x</button>',
  "<style>@import 'javascript:alert(1)';</style>",
  '<a href="x" style="background:url(javascript:alert(1))">x</a>',
  '<base href="javascript:alert(1)//">',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
  '<img srcset="javascript:alert(1)">',
  "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
  "[click](javascript:alert(1))",
  "[click](JaVaScRiPt:alert(1))",
  "[click]( javascript:alert(1))",
  "[click](<javascript:alert(1)>)",
  "[click](<java\tscript:alert(1)>)",
  "[click](javascript://%0aalert(1))",
  "[click](javascript&colon;alert(1))",
  "[click](javascript&#58;alert(1))",
  "[click](javascript&#0000058alert(1))",
  "[click](&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1))",
  "[click](&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;&#x3A;alert(1))",
  "[click](&#x26;#x6A;avascript:alert(1))",
  "[click](javas&#99;ript:alert(1))",
  "[click](\u0001javascript:alert(1))",
  "![img](javascript:alert(1))",
  "![img](JAVASCRIPT:alert(1))",
  "[x](vbscript:msgbox(1))",
  "[x](VBScript:msgbox(1))",
  "![x](vbscript:msgbox(1))",
  "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
  "[x](data:text/html,<script>alert(1)</script>)",
  "![x](data:text/html,<script>alert(1)</script>)",
  "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
  "[x](DaTa:text/html,alert(1))",
  "[x][ref]\n\n[ref]: javascript:alert(1)",
  '[x][ref]\n\n[ref]: <javascript:alert(1)> "title"',
  "[x][ref]\n\n[ref]: vbscript:msgbox(1)",
  "[x][ref]\n\n[ref]: data:text/html,<script>alert(1)</script>",
  "![x][img]\n\n[img]: javascript:alert(1)",
  "[ref]\n\n[ref]: &#106;avascript:alert(1)",
  "<javascript:alert(1)>",
  "<JAVASCRIPT:alert(1)>",
  "<vbscript:msgbox(1)>",
  "<data:text/html,alert(1)>",
  '<https://ok.example/"onmouseover="alert(1)>',
  "www.example.com/javascript:alert(1)",
  'https://ok.example/"><script>alert(1)</script>',
  '[x](https://ok.example "title\\" onmouseover=\\"alert(1)")',
  '![x](https://ok.example/a.png"onerror="alert(1))',
  '![x](x "onerror=alert(1)")',
  "[<img src=x onerror=alert(1)>](https://ok.example)",
  "**<script>alert(1)</script>**",
  "> <script>alert(1)</script>",
  "- [ ] <img src=x onerror=alert(1)>",
  "| a |\n|---|\n| <script>alert(1)</script> |",
  "`<script>alert(1)</script>`",
  "```html\n<script>alert(1)</script>\n```",
  "    <script>alert(1)</script>",
  "&lt;script&gt;alert(1)&lt;/script&gt;",
  "<scr<script>ipt>alert(1)</script>",
  "<<script>script>alert(1)<</script>/script>",
  "<!--<script>alert(1)</script>-->",
  "<![CDATA[<script>alert(1)</script>]]>",
  "<a href=javascript&colon;alert(1)>x</a>",
];

const ACTIVE_ELEMENTS =
  "script, iframe, frame, frameset, object, embed, applet, base, meta, link, style, form, svg, math, template, noscript, audio, video, source, track, portal";
const URL_ATTRIBUTES = new Set([
  "href",
  "src",
  "srcset",
  "action",
  "formaction",
  "xlink:href",
  "data",
  "poster",
  "background",
  "cite",
  "ping",
  "codebase",
  "lowsrc",
  "dynsrc",
]);
const DANGEROUS_SCHEME = /^(javascript|vbscript|data):/;

/** Every reason `html` could execute in a browser; empty when it is inert. */
// biome-ignore lint/suspicious/noExportsInTest: the XSS corpus and its checker are shared with the other hostile-input suites
export function executableParts(html: string): string[] {
  const { document } = new JSDOM(`<!doctype html><body>${html}</body>`).window;
  const problems: string[] = [];
  for (const element of document.body.querySelectorAll(ACTIVE_ELEMENTS)) problems.push(`<${element.tagName.toLowerCase()}> element`);
  for (const element of document.body.querySelectorAll("*")) {
    for (const attribute of element.attributes) {
      const name = attribute.name.toLowerCase();
      // getAttribute values are already entity-decoded; browsers ignore controls and spaces here.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: browsers strip these before reading a scheme, so the check does too
      const value = attribute.value.replace(/[\u0000-\u0020\u007f-\u009f]/g, "").toLowerCase();
      if (name.startsWith("on")) problems.push(`${name} handler on <${element.tagName.toLowerCase()}>`);
      if (URL_ATTRIBUTES.has(name) && DANGEROUS_SCHEME.test(value)) problems.push(`${name}="${attribute.value}"`);
      if (name === "srcset" && /(javascript|vbscript|data):/.test(value)) problems.push(`srcset="${attribute.value}"`);
      if (name === "style" && /(javascript:|expression\(|url\()/.test(value)) problems.push(`style="${attribute.value}"`);
    }
  }
  return problems;
}

let ctx: TestContext;
let p: ImportedProject;

beforeAll(async () => {
  ctx = await createTestContext();
  p = await ctx.importProject({
    releases: XSS_CORPUS.map((body, i) => ({
      ref: `r${i}`,
      name: `Release ${i}`,
      slug: `release-${i}`,
      body,
      published_at: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
    })),
  });
});
afterAll(() => ctx.close());

describe("markdown XSS corpus through release notes", () => {
  it("the checker itself catches what it must (control)", () => {
    expect(executableParts("<script>alert(1)</script>")).not.toEqual([]);
    expect(executableParts('<img src="x" onerror="alert(1)">')).not.toEqual([]);
    expect(executableParts('<a href="&#106;avascript:alert(1)">x</a>')).not.toEqual([]);
    expect(executableParts('<a href=" java\tscript:x">x</a>')).not.toEqual([]);
    expect(executableParts('<img src="data:text/html,x">')).not.toEqual([]);
    expect(executableParts('<a href="VBSCRIPT:x">x</a>')).not.toEqual([]);
    expect(executableParts('<p>&lt;script&gt;</p><a href="https://ok.example">ok</a>')).toEqual([]);
  });

  it("serves no executable HTML on the changelog detail, for every entry of the corpus", async () => {
    const releases = idsOf(p).releases as Record<string, number>;
    const failures: string[] = [];
    for (const [i, body] of XSS_CORPUS.entries()) {
      const response = await ctx.get(`/api/v3/projects/${p.slug}/changelog/${releases[`r${i}`]}`, p.secretKey);
      expect(response.status).toBe(200);
      const data = (await response.json()).data;
      expect(data.body).toBe(body); // the markdown source is returned verbatim
      const problems = executableParts(data.body_html ?? "");
      if (problems.length > 0) failures.push(`${JSON.stringify(body)} -> ${data.body_html}: ${problems.join(", ")}`);
    }
    expect(failures).toEqual([]);
    recordCount("hostile", "markdown XSS payloads neutralised in body_html", XSS_CORPUS.length);
  });

  it("serves no executable HTML on the changelog list either", async () => {
    let seen = 0;
    for (let page = 1; page <= Math.ceil(XSS_CORPUS.length / 100); page++) {
      const response = await ctx.get(`/api/v3/projects/${p.slug}/changelog?per_page=100&page=${page}`, p.secretKey);
      expect(response.status).toBe(200);
      for (const release of (await response.json()).data) {
        seen++;
        expect(executableParts(release.body_html ?? ""), release.body).toEqual([]);
      }
    }
    expect(seen).toBe(XSS_CORPUS.length);
  });
});
