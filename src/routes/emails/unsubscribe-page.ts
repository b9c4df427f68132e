/**
 * The page a person gets from an email's unsubscribe link (engagement-api-v3.md, "Email
 * notifications", "Unsubscribe"): when the request's Accept header prefers text/html to
 * application/json, GET and POST of /api/v3/unsubscribe/{token} answer this page instead of the
 * JSON envelope. A GET shows the project's name, the current state and one button that POSTs to
 * the same address (the GET changes nothing: mail scanners open links, RFC 8058); a POST shows
 * that it is done.
 *
 * The page needs no script and no outside resource: its one <style> element is allowed by its
 * hash in UNSUBSCRIBE_PAGE_CSP, which refuses everything else, and the form posts back to the
 * page's own address (`form-action 'self'`).
 */
import { createHash } from "node:crypto";
import { parseAccept } from "hono/utils/accept";
import { escapeHtml } from "../../events/email/html-escape.ts";

const STYLE =
  "body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5;color:#111827}" +
  "button{font:inherit;padding:.5rem 1.25rem;border:1px solid #1f2937;border-radius:.375rem;background:#1f2937;color:#fff;cursor:pointer}" +
  "button:focus-visible{outline:3px solid #2563eb;outline-offset:2px}";

/** The page's Content-Security-Policy: nothing but its own style element and a form posting to itself. */
export const UNSUBSCRIBE_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`,
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * The quality `accept` (parsed Accept entries) gives `type`: that of its most specific matching
 * range (RFC 9110, 12.5.1), 0 when none matches.
 */
function quality(accept: ReturnType<typeof parseAccept>, type: string): number {
  const [main] = type.split("/");
  let best = { specificity: 0, q: 0 };
  for (const entry of accept) {
    const range = entry.type.toLowerCase();
    const specificity = range === type ? 3 : range === `${main}/*` ? 2 : range === "*/*" ? 1 : 0;
    if (specificity > best.specificity) best = { specificity, q: entry.q };
  }
  return best.q;
}

/**
 * Whether an Accept header value (undefined: none sent) prefers text/html to application/json:
 * text/html has a strictly higher quality. A browser's navigation (`text/html,...,*\/*;q=0.8`)
 * does; no header, `*\/*` and `application/json` do not.
 */
export function prefersHtml(acceptHeader: string | undefined): boolean {
  if (!acceptHeader) return false;
  const accept = parseAccept(acceptHeader);
  return quality(accept, "text/html") > quality(accept, "application/json");
}

/** What the page shows: the project's name, whether the voter is unsubscribed, and which request it answers. */
export interface UnsubscribePageInput {
  projectName: string;
  unsubscribed: boolean;
  method: "GET" | "POST";
}

/**
 * The HTML document (UTF-8) of the page. The project's name is HTML-escaped; the form has no
 * action, so it posts to the address the page was opened at, and no field, so its POST is not
 * the one-click form (whose answer is JSON).
 */
export function unsubscribePage({ projectName, unsubscribed, method }: UnsubscribePageInput): string {
  const name = escapeHtml(projectName);
  let title: string;
  let body: string;
  if (method === "POST") {
    title = `Unsubscribed from ${name}`;
    body =
      `<h1>You are unsubscribed</h1>` +
      `<p role="status">Done: you will receive no more emails from ${name}. ` +
      "Your notifications and the features you follow stay as they were.</p>";
  } else {
    title = `Unsubscribe from ${name}`;
    const state = unsubscribed
      ? `You are already unsubscribed: you receive no emails from ${name}.`
      : `You receive emails from ${name} about the features you follow.`;
    body =
      `<h1>Unsubscribe from ${name} emails</h1>` +
      `<p>${state}</p>` +
      `<form method="post"><button type="submit">Unsubscribe</button></form>`;
  }
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<meta name="robots" content="noindex">` +
    `<title>${title}</title><style>${STYLE}</style></head>` +
    `<body><main>${body}</main></body></html>`
  );
}
