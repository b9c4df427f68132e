/**
 * The API reference page (/docs/reference) and the Scalar bundle it runs, both served by this
 * process so that the page works without internet access (docs/decisions.md, "Access, errors and
 * headers": "Reference page offline").
 *
 * The bundle is the browser build of the installed, exactly pinned @scalar/api-reference
 * (package.json), served at /docs/scalar-<version>.js: a new version is a new address, so the
 * answer may be cached for a year (immutable). The page is Scalar's own (@scalar/hono-api-reference)
 * with its `cdn` pointed at that address, the script tag given a sha384 integrity, and a
 * Content-Security-Policy that lets it run only this origin's scripts plus its one inline
 * start-up script (by hash), and connect only to this origin, where its "try it" requests go. Both are built on first use and kept for the life of the process.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { Scalar } from "@scalar/hono-api-reference";
import type { Context } from "hono";
import { Hono } from "hono";

const gzipAsync = promisify(gzip);
const BUNDLE_ENTRY = "@scalar/api-reference/browser/standalone.js";

interface Bundle {
  body: Buffer;
  gzipped: Buffer;
  etag: string;
  /** Subresource-integrity value of `body` (sha384, base64). */
  integrity: string;
}

interface Page {
  html: string;
  csp: string;
}

/**
 * The page and bundle of the API served under `prefix` (e.g. /api/v3), titled `title`.
 * `bundlePath` is the bundle's path below `prefix` (/docs/scalar-<version>.js). Throws if
 * @scalar/api-reference is not installed. The handlers reject (500) if Scalar's page no longer
 * has the script tag this relies on.
 */
export function referencePage(prefix: string, title: string) {
  const file = createRequire(import.meta.url).resolve(BUNDLE_ENTRY);
  const { version } = JSON.parse(readFileSync(join(dirname(file), "..", "..", "package.json"), "utf8")) as { version: string };
  const bundlePath = `/docs/scalar-${version}.js`;
  const src = `${prefix}${bundlePath}`;
  let bundle: Promise<Bundle> | undefined;
  let page: Promise<Page> | undefined;
  // Built once; a failed build is forgotten, so the next request tries again.
  const getBundle = () =>
    (bundle ??= loadBundle().catch((error: unknown) => {
      bundle = undefined;
      throw error;
    }));
  const getPage = () =>
    (page ??= buildPage().catch((error: unknown) => {
      page = undefined;
      throw error;
    }));

  const loadBundle = async (): Promise<Bundle> => {
    const body = await readFile(file);
    return {
      body,
      gzipped: await gzipAsync(body, { level: 9 }),
      etag: `"${createHash("sha1").update(body).digest("hex")}"`,
      integrity: `sha384-${createHash("sha384").update(body).digest("base64")}`,
    };
  };

  const buildPage = async (): Promise<Page> => {
    const { integrity } = await getBundle();
    const probe = new Hono().get(
      "/",
      Scalar({
        url: `${prefix}/openapi.json`,
        // Try-it sends requests to the origin the page was loaded from (Scalar resolves a
        // relative server URL against window.location), which connect-src 'self' allows; the
        // description's own server, the deployment's origin (localhost:8080 by default), would be
        // another origin for a page opened at 127.0.0.1 or behind a proxy.
        servers: [{ url: "/", description: "This server: the address this page was loaded from" }],
        pageTitle: title,
        cdn: src,
        // Nothing that calls another host: the default fonts come from Scalar's font server, and
        // on a local address (127.0.0.1, localhost) Scalar turns on its AI agent and developer
        // toolbar, which fetch from Scalar's servers.
        withDefaultFonts: false,
        showDeveloperTools: "never",
        agent: { disabled: true },
      }),
    );
    const scalarHtml = await (await probe.request("/")).text();
    const tag = `<script src="${src}">`;
    if (!scalarHtml.includes(tag)) throw new Error("Scalar's page has no script tag for the bundle");
    const html = scalarHtml.replace(tag, `<script src="${src}" integrity="${integrity}" crossorigin="anonymous">`);
    const inline = [...html.matchAll(/<script type="text\/javascript">([\s\S]*?)<\/script>/g)].map(
      (match) => `'sha256-${createHash("sha256").update(match[1]!).digest("base64")}'`,
    );
    const csp = [
      "default-src 'self'",
      `script-src 'self' ${inline.join(" ")}`,
      // Scalar's components set style attributes and inject <style> elements at run time.
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data: blob:",
      "font-src 'self' data:",
      "connect-src 'self'",
      "worker-src 'self' blob:",
      "object-src 'none'",
      "base-uri 'none'",
      "frame-ancestors 'self'",
    ].join("; ");
    return { html, csp };
  };

  return {
    bundlePath,
    /** GET of the bundle: gzip when accepted, cacheable for a year (the address names the version). */
    async serveBundle(c: Context): Promise<Response> {
      const { body, gzipped, etag } = await getBundle();
      const wantsGzip = /\bgzip\b/.test(c.req.header("Accept-Encoding") ?? "");
      const headers: Record<string, string> = {
        "Content-Type": "text/javascript; charset=utf-8",
        "Cache-Control": "public, max-age=31536000, immutable",
        ETag: etag,
        Vary: "Origin, Accept-Encoding",
      };
      if (wantsGzip) headers["Content-Encoding"] = "gzip";
      return c.body(new Uint8Array(wantsGzip ? gzipped : body), 200, headers);
    },
    /** GET of the page, with its own Content-Security-Policy. */
    async servePage(c: Context): Promise<Response> {
      const { html, csp } = await getPage();
      return c.html(html, 200, { "Content-Security-Policy": csp });
    },
  };
}
