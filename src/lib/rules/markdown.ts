/**
 * Release notes: markdown rendered to HTML once, when a release is written or imported, and
 * stored (contract, ReleaseObject.body_html). Raw HTML in the source is refused (shown escaped,
 * never passed through) and link or image addresses with a scheme other than http, https or
 * mailto are blanked (href=""). DOMPurify then runs over the result as a second fence.
 */
import { createRequire } from "node:module";
import type createDOMPurify from "dompurify";
import type { JSDOM as JSDOMClass } from "jsdom";
import { Marked, type Tokens } from "marked";

const SAFE_SCHEMES = new Set(["http:", "https:", "mailto:"]);
const require = createRequire(import.meta.url);

let purifier: ReturnType<typeof createDOMPurify> | undefined;

function getPurifier() {
  // jsdom takes ~100 ms to start and ~45 MB once loaded: a server that never renders a note
  // (releases are rendered on import, not on reads) should not carry it, so it is required
  // (synchronously, both packages ship CommonJS) when a note is first rendered.
  if (!purifier) {
    const { JSDOM } = require("jsdom") as { JSDOM: typeof JSDOMClass };
    const create = require("dompurify") as typeof createDOMPurify;
    purifier = create(new JSDOM("").window);
  }
  return purifier;
}

function escapeHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;").replaceAll("'", "&#39;");
}

/**
 * Returns the address when it is relative or uses a safe scheme, else "". Control characters
 * and whitespace are stripped first, since browsers ignore them inside a scheme ("java\tscript:").
 */
export function safeHref(href: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: browsers ignore control characters inside a URL scheme; so must the check
  const compact = href.replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(compact);
  if (!scheme) return /^[/#?.]|^[^:]*$/.test(compact) ? href : "";
  return SAFE_SCHEMES.has(`${scheme[1]!.toLowerCase()}:`) ? href : "";
}

const marked = new Marked({
  gfm: true,
  async: false,
  renderer: {
    html(token: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(token.text);
    },
    link(token: Tokens.Link) {
      const text = this.parser.parseInline(token.tokens);
      const title = token.title ? ` title="${escapeHtml(token.title)}"` : "";
      return `<a href="${escapeHtml(safeHref(token.href))}"${title} rel="nofollow noopener">${text}</a>`;
    },
    image(token: Tokens.Image) {
      const title = token.title ? ` title="${escapeHtml(token.title)}"` : "";
      return `<img src="${escapeHtml(safeHref(token.href))}" alt="${escapeHtml(token.text)}"${title}>`;
    },
  },
});

/** Renders markdown to sanitized HTML; null in, null out. */
export function renderMarkdown(markdown: string | null): string | null {
  if (markdown === null) return null;
  const html = marked.parse(markdown) as string;
  return getPurifier().sanitize(html, {
    ALLOWED_URI_REGEXP: /^(?:(?:https?|mailto):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i,
    ADD_ATTR: ["rel"],
  });
}
