/**
 * Admin command line (spec/project-snapshot.md, "Commands"):
 *
 *   npm run --silent admin -- import FILE|- [--replace]   prints the id map (JSON)
 *   npm run --silent admin -- export SLUG                 prints the snapshot (JSON)
 *   npm run --silent admin -- keys create SLUG --kind secret|embed
 *   npm run --silent admin -- keys regenerate SLUG --kind secret|embed
 *   npm run --silent admin -- demo                        (re)loads the bundled demo project
 *
 * Uses DATABASE_URL (or PGlite in PGLITE_DIR, default ./data) exactly as the server does and
 * applies pending migrations first. Results go to stdout, faults to stderr; exit status 1 on
 * a refused snapshot or any other error, 2 on a usage error.
 */
import { readFile } from "node:fs/promises";
import { migrateToLatest, openDatabase, type Db } from "../db/connect.ts";
import { DEMO_ANON_TOKEN, DEMO_EMBED_KEY, DEMO_SECRET_KEY, DEMO_SLUG, loadDemoSnapshot } from "../src/admin/demo.ts";
import { createKey, type KeyKind, regenerateKey } from "../src/admin/keys.ts";
import { exportSnapshot } from "../src/admin/snapshot-export.ts";
import { importSnapshot, SnapshotValidationError } from "../src/admin/snapshot-import.ts";

const USAGE = `usage: npm run --silent admin -- <command>
  import FILE|- [--replace]                 import a project snapshot (- reads stdin)
  export SLUG                               print a project as a snapshot
  keys create SLUG --kind secret|embed      add a key and print it once
  keys regenerate SLUG --kind secret|embed  replace the keys of that kind and print the new one
  demo                                      (re)load the bundled demo project "${DEMO_SLUG}"`;

class UsageError extends Error {}

async function readInput(file: string): Promise<string> {
  if (file !== "-") return readFile(file, "utf8");
  const parts: Buffer[] = [];
  for await (const chunk of process.stdin) parts.push(chunk as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

function kindOption(args: string[]): KeyKind {
  const index = args.indexOf("--kind");
  const kind = index >= 0 ? args[index + 1] : args.find((a) => a.startsWith("--kind="))?.slice("--kind=".length);
  if (kind !== "secret" && kind !== "embed") throw new UsageError("keys: --kind must be secret or embed");
  return kind;
}

function print(value: unknown) {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

async function run(db: Db, args: string[]): Promise<void> {
  const [command, ...rest] = args;
  const positional = rest.filter((a, i) => !a.startsWith("--") && rest[i - 1] !== "--kind");
  switch (command) {
    case "import": {
      const file = positional[0];
      if (!file) throw new UsageError("import: name a FILE, or - for stdin");
      const text = await readInput(file);
      let input: unknown;
      try {
        input = JSON.parse(text);
      } catch (error) {
        throw new SnapshotValidationError([{ path: "(document)", message: `not valid JSON: ${(error as Error).message}` }]);
      }
      print(await importSnapshot(db, input, { replace: rest.includes("--replace") }));
      return;
    }
    case "export": {
      const slug = positional[0];
      if (!slug) throw new UsageError("export: name a project SLUG");
      print(await exportSnapshot(db, slug));
      return;
    }
    case "keys": {
      const [action, slug] = positional;
      if ((action !== "create" && action !== "regenerate") || !slug) {
        throw new UsageError("keys: create|regenerate SLUG --kind secret|embed");
      }
      const kind = kindOption(rest);
      const key = action === "create" ? await createKey(db, slug, kind) : await regenerateKey(db, slug, kind);
      process.stdout.write(`${key}\n`);
      return;
    }
    case "demo": {
      await importSnapshot(db, loadDemoSnapshot(), { replace: true });
      process.stdout.write([
        `project:    ${DEMO_SLUG}`,
        `secret key: ${DEMO_SECRET_KEY}`,
        `embed key:  ${DEMO_EMBED_KEY}`,
        `anon token: ${DEMO_ANON_TOKEN}  (X-VF-Anon of a voter with history)`,
        "",
      ].join("\n"));
      return;
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : "no command given");
  }
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length === 0 || args[0] === "help" || args.includes("--help")) {
    process.stdout.write(`${USAGE}\n`);
    if (args.length === 0) process.exitCode = 2;
    return;
  }
  let handle: Awaited<ReturnType<typeof openDatabase>> | undefined;
  let code = 0;
  try {
    handle = await openDatabase({ DATABASE_URL: process.env.DATABASE_URL, PGLITE_DIR: process.env.PGLITE_DIR ?? "./data" });
    await migrateToLatest(handle.db);
    await run(handle.db, args);
  } catch (error) {
    if (error instanceof SnapshotValidationError) {
      for (const issue of error.issues) process.stderr.write(`${issue.path}: ${issue.message}\n`);
      code = 1;
    } else if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n\n${USAGE}\n`);
      code = 2;
    } else {
      process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
      code = 1;
    }
  } finally {
    await handle?.close();
  }
  // Set last: closing PGlite shuts its Emscripten runtime down, which resets process.exitCode.
  process.exitCode = code;
}

await main();
