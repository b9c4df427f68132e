/**
 * Writes openapi/openapi.json from the route definitions (`npm run openapi`), or with --check
 * exits 1 when the committed file differs from what the routes generate (CI).
 */
import { readFile, writeFile } from "node:fs/promises";
import { createApp } from "../src/app.ts";
import type { AppDeps } from "../src/lib/context.ts";
import { buildOpenApiDocument } from "../src/lib/openapi-document.ts";

const target = new URL("../openapi/openapi.json", import.meta.url);
// No request is served here: the route definitions are all the description needs.
const app = createApp({} as AppDeps);
const generated = JSON.stringify(buildOpenApiDocument(app), null, 2) + "\n";

if (process.argv.includes("--check")) {
  const committed = await readFile(target, "utf8").catch(() => "");
  if (committed !== generated) {
    process.stderr.write("openapi/openapi.json is stale: run `npm run openapi` and commit the result\n");
    process.exitCode = 1;
  } else {
    process.stdout.write("openapi/openapi.json is up to date\n");
  }
} else {
  await writeFile(target, generated);
  process.stdout.write(`wrote ${target.pathname}\n`);
}
