/**
 * The board widget's module (docs/contract/clients-v3.md, "Embedding"), bundled from the
 * sources in widget/ by esbuild into one minified ES module. The server builds it once, on the
 * first request for it, and keeps it for the life of the process (a failed build is forgotten,
 * so the next request tries again); `npm run widget:build` writes the same bytes to
 * dist/widget/feedback-board.js, which the size budget measures (package.json "size-limit").
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { build } from "esbuild";

const gzipAsync = promisify(gzip);
const ENTRY = join("widget", "feedback-board.ts");

export interface WidgetBundle {
  /** The module's bytes. */
  body: Uint8Array;
  /** The same bytes gzipped (level 9), for clients that accept gzip. */
  gzipped: Uint8Array;
  /** First 16 hex digits of the SHA-256 of `body`: the `v` of the versioned address and X-Widget-Version. */
  hash: string;
}

/**
 * The repository root holding widget/: found upwards from this file, so that the server run
 * from src/ (tsx) and from dist/ (npm run build) find the same sources. Throws when none is.
 */
export function widgetRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    if (existsSync(join(dir, ENTRY))) return dir;
    dir = dirname(dir);
  }
  throw new Error(`the widget sources (${ENTRY}) were not found above ${fileURLToPath(import.meta.url)}`);
}

/** Bundles widget/feedback-board.ts (esbuild: ESM, minified, ES2020, no source map). Throws on a build error. */
export async function buildWidget(): Promise<WidgetBundle> {
  const root = widgetRoot();
  const result = await build({
    absWorkingDir: root,
    entryPoints: [ENTRY],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2020",
    minify: true,
    write: false,
    legalComments: "eof",
    logLevel: "silent",
  });
  const body = result.outputFiles[0]!.contents;
  return {
    body,
    gzipped: new Uint8Array(await gzipAsync(body, { level: 9 })),
    hash: createHash("sha256").update(body).digest("hex").slice(0, 16),
  };
}

/** A lazily built, then kept, bundle: `get()` builds on the first call and shares the promise. */
export function widgetBundleCache(make: () => Promise<WidgetBundle> = buildWidget) {
  let bundle: Promise<WidgetBundle> | undefined;
  return {
    get(): Promise<WidgetBundle> {
      bundle ??= make().catch((error: unknown) => {
        bundle = undefined;
        throw error;
      });
      return bundle;
    },
  };
}
