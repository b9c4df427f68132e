/**
 * GET /demo (docs/contract/clients-v3.md, "The demo page"): an HTML page that embeds the board
 * widget on the bundled demo project with its published embed key, so that a newcomer opens
 * http://127.0.0.1:8080/demo and votes in a browser. Served only while the process serves the
 * demo (AppDeps.demo, set by src/server.ts) and the database still holds that project; otherwise
 * 404. The page runs under the Content-Security-Policy the contract holds the widget to
 * (`script-src 'self'`, `style-src 'self' 'unsafe-inline'`): it has no script of its own.
 */
import type { Context } from "hono";
import { escapeHtml } from "../../events/email/html-escape.ts";
import type { AppEnv } from "../../lib/http/context.ts";
import { failure } from "../../lib/http/envelope.ts";
import { ApiError } from "../../lib/http/errors.ts";
import type { WidgetBundle } from "./widget-bundle.ts";

export const DEMO_PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The page's HTML for project `slug` with `embedKey`, loading the widget from `widgetSrc`. */
export function demoPageHtml(slug: string, embedKey: string, widgetSrc: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Feedback board demo</title>
<script type="module" src="${escapeHtml(widgetSrc)}"></script>
<style>
body{margin:0;font-family:system-ui,sans-serif;background:#f5f5f4;color:#1c1917}
main{max-width:860px;margin:0 auto;padding:24px 16px}
h1{font-size:1.5rem;margin:0 0 4px}
p{margin:0 0 16px;color:#44403c}
code{font-size:.9em}
@media (prefers-color-scheme:dark){body{background:#0c0a09;color:#fafaf9}p{color:#d6d3d1}}
</style>
</head>
<body>
<main>
<h1>Feedback board demo</h1>
<p>The board widget on the demo project <code>${escapeHtml(slug)}</code>, embedded with its published embed key. Vote, comment and suggest: everything goes through the public API of this server.</p>
<feedback-board project="${escapeHtml(slug)}" key="${escapeHtml(embedKey)}"></feedback-board>
</main>
</body>
</html>
`;
}

/**
 * The handler of GET /demo: the page when `deps.demo` names a project the database holds, else
 * 404 not_found. `widget` gives the module's version, so the page loads `widget.js?v={version}`.
 */
export function demoPageHandler(prefix: string, widget: { get(): Promise<WidgetBundle> }) {
  return async (c: Context<AppEnv>): Promise<Response> => {
    const deps = c.get("deps");
    const demo = deps.demo;
    const project = demo
      ? await deps.db.selectFrom("projects").select("id").where("slug", "=", demo.slug).where("is_private", "=", false).executeTakeFirst()
      : undefined;
    if (!demo || !project) return c.json(failure(new ApiError("not_found", "this server does not serve the demo project")), 404);
    const { hash } = await widget.get();
    return c.html(demoPageHtml(demo.slug, demo.embedKey, `${prefix}/widget.js?v=${hash}`), 200, {
      "Content-Security-Policy": DEMO_PAGE_CSP,
      "Cache-Control": "no-store",
    });
  };
}
