/**
 * Admin command line (docs/contract/project-snapshot.md, "Commands"):
 *
 *   npm run --silent admin -- import FILE|- [--replace] [--progress-interval MS]
 *                                                         prints the id map (JSON)
 *   npm run --silent admin -- export SLUG                 prints the snapshot (JSON)
 *   npm run --silent admin -- keys create SLUG --kind secret|embed
 *   npm run --silent admin -- keys regenerate SLUG --kind secret|embed
 *   npm run --silent admin -- demo                        (re)loads the bundled demo project
 *   npm run --silent admin -- import-from SOURCE [FILE] --project SLUG [--dry-run] [--boards custom] [--status-map JSON]
 *                                                         runs an import (imports-v3.md, "Command line"):
 *                                                         prints the ImportObject (JSON); exit 0 succeeded, 1 failed
 *
 * Uses DATABASE_URL (or PGlite in PGLITE_DIR, default ./data) exactly as the server does and
 * applies pending migrations first. Results go to stdout, faults to stderr; exit status 1 on
 * a refused snapshot or any other error, 2 on a usage error.
 *
 * A long import reports progress on stderr (stdout stays the id map alone): a line at most every
 * --progress-interval milliseconds (default 2000; 0 reports after every chunk), the first once
 * that much time has passed, so an import shorter than the interval prints nothing; and a last
 * line with the totals when any was printed.
 */
import { readFile } from "node:fs/promises";
import cliProgress from "cli-progress";
import { type Db, migrateToLatest, openDatabase } from "../db/connect.ts";
import { DEMO_ANON_TOKEN, DEMO_EMBED_KEY, DEMO_SECRET_KEY, DEMO_SLUG, loadDemoSnapshot } from "../src/admin/demo.ts";
import { exportSnapshot } from "../src/admin/snapshot-export.ts";
import { importSnapshot, SnapshotValidationError } from "../src/admin/snapshot-import.ts";
import { parseConfig } from "../src/config.ts";
import { createLogger } from "../src/deps.ts";
import { generateLeaseToken, IMPORT_SOURCES, insertImport, parseStatusMap, runImportJob, toImport } from "../src/routes/imports/index.ts";
import { createGuardedFetch, fetchCannyExport } from "../src/routes/imports/readers/index.ts";
import { createKey, type KeyKind, regenerateKey } from "../src/routes/keys/index.ts";
import { connectRedis, RedisRateLimiter } from "../src/store/redis.ts";

const USAGE = `usage: npm run --silent admin -- <command>
  import FILE|- [--replace] [--progress-interval MS]
                                            import a project snapshot (- reads stdin);
                                            progress on stderr every MS ms (default 2000)
  export SLUG                               print a project as a snapshot
  keys create SLUG --kind secret|embed      add a key and print it once
  keys regenerate SLUG --kind secret|embed  replace the keys of that kind and print the new one
  demo                                      (re)load the bundled demo project "${DEMO_SLUG}"
  import-from SOURCE [FILE] --project SLUG [--dry-run] [--boards custom] [--status-map JSON]
                                            import a Canny, Fider or CSV export (canny without FILE:
                                            Canny's API, key in CANNY_API_KEY); prints the ImportObject;
                                            exit 0 succeeded, 1 failed, 2 bad arguments`;

class UsageError extends Error {}

async function readInput(file: string): Promise<string> {
  if (file !== "-") return readFile(file, "utf8");
  const parts: Buffer[] = [];
  for await (const chunk of process.stdin) parts.push(chunk as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

function kindOption(args: string[]): KeyKind {
  const kind = optionValue(args, "--kind");
  if (kind !== "secret" && kind !== "embed") throw new UsageError("keys: --kind must be secret or embed");
  return kind;
}

/** The value of option `--name VALUE` or `--name=VALUE`, if given. */
function optionValue(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}

/**
 * A progress sink for importSnapshot that writes `import: features 12000/20000 (5400 rows/s)`
 * to stderr at most every `intervalMs` (rows/s: every row written so far over the time since
 * the import started), and `done()`, which prints the totals if anything was printed.
 */
function stderrProgress(intervalMs: number, write = (line: string) => process.stderr.write(`${line}\n`)) {
  const started = performance.now();
  let last = started;
  let printed = false;
  const written = new Map<string, number>();
  const rows = () => [...written.values()].reduce((sum, n) => sum + n, 0);
  const rate = (now: number) => Math.round(rows() / Math.max((now - started) / 1000, 0.001));
  return {
    sink: (step: string, done: number, total: number) => {
      if (total > 1 || done > 0) written.set(step, done);
      const now = performance.now();
      if (now - last < intervalMs) return;
      last = now;
      printed = true;
      write(done === 0 && total === 1 ? `import: ${step}` : `import: ${step} ${done}/${total} (${rate(now)} rows/s)`);
    },
    done: () => {
      const now = performance.now();
      if (printed) write(`import: done, ${rows()} rows in ${((now - started) / 1000).toFixed(1)} s (${rate(now)} rows/s)`);
    },
  };
}

/**
 * Gives project `slug` a new content revision in the shared store (Redis, when REDIS_URL is set)
 * after an import, so that from the moment this command returns no instance
 * serves a cached read of the old content (src/middleware/shared-read-cache.ts). The database
 * notification the import sends clears every instance's caches as well; this closes the
 * moments before an instance has received it. Without REDIS_URL the store lives in each server
 * process and the notification is the only way. A Redis failure is reported on stderr only.
 */
async function retireContentRevision(db: Db, slug: string): Promise<void> {
  const config = parseConfig(process.env);
  if (!config.REDIS_URL) return;
  const project = await db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirst();
  if (!project) return;
  const redis = connectRedis(config.REDIS_URL, Math.max(config.REDIS_COMMAND_TIMEOUT_MS, 2000), config.REDIS_KEY_PREFIX);
  try {
    await new Promise<void>((resolve) => {
      redis.once("ready", () => resolve());
      redis.once("error", () => resolve());
    });
    const limiter = new RedisRateLimiter(redis, createLogger("silent"));
    // Keys, settings and voters may all have changed: the lookups revision moves too.
    if (!(await limiter.bump(project.id, { lookups: true }))) {
      process.stderr.write("warning: Redis did not take the new revisions; servers clear their caches on the database notification\n");
    }
    await limiter.close();
  } finally {
    redis.disconnect();
  }
}

/**
 * `import-from` (imports-v3.md, "Command line"): checks the arguments (UsageError: exit 2),
 * creates the import row, runs the job in this process (the same runner as the servers') and
 * prints the ImportObject. A progress bar goes to stderr when it is a terminal. Exit status 0
 * when the import succeeded, 1 when it failed.
 */
async function importFrom(db: Db, rest: string[]): Promise<number> {
  const valued = new Set(["--project", "--boards", "--status-map"]);
  const positional = rest.filter((a, i) => !a.startsWith("--") && !valued.has(rest[i - 1] ?? ""));
  const [source, file, extra] = positional;
  if (!source || !(IMPORT_SOURCES as readonly string[]).includes(source)) {
    throw new UsageError(`import-from: SOURCE must be one of ${IMPORT_SOURCES.join(", ")}`);
  }
  if (extra !== undefined) throw new UsageError(`import-from: unexpected argument "${extra}"`);
  const slug = optionValue(rest, "--project");
  if (!slug) throw new UsageError("import-from: --project SLUG is required");
  const boards = optionValue(rest, "--boards") ?? "roadmap";
  if (boards !== "roadmap" && boards !== "custom") throw new UsageError("import-from: --boards must be roadmap or custom");
  let statusMap: Record<string, string>;
  try {
    statusMap = parseStatusMap(optionValue(rest, "--status-map"));
  } catch (error) {
    throw new UsageError(`import-from: --status-map: ${(error as Error).message}`);
  }
  const project = await db.selectFrom("projects").select(["id", "slug"]).where("slug", "=", slug).executeTakeFirst();
  if (!project) throw new UsageError(`import-from: no project "${slug}"`);
  const config = parseConfig(process.env);
  let bytes: Uint8Array;
  if (file !== undefined) {
    try {
      bytes = new Uint8Array(await readFile(file));
    } catch (error) {
      throw new UsageError(`import-from: cannot read ${file}: ${(error as Error).message}`);
    }
  } else {
    if (source !== "canny") throw new UsageError(`import-from: name the ${source} export FILE`);
    const apiKey = process.env.CANNY_API_KEY;
    if (!apiKey) throw new UsageError("import-from: without FILE, Canny's API is read with the key in CANNY_API_KEY, which is not set");
    // The key is used for these requests only (imports-v3.md, rule 8).
    bytes = await fetchCannyExport({
      apiKey,
      baseUrl: config.CANNY_API_URL,
      fetch: createGuardedFetch({ allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_URLS }),
    });
  }
  const token = generateLeaseToken();
  const created = await insertImport(db, {
    projectId: project.id,
    source,
    dryRun: rest.includes("--dry-run"),
    options: { boards, status_map: statusMap },
    file: { name: file ?? null, bytes },
    lease: { token, seconds: config.IMPORT_LEASE_SECONDS },
  });
  const bar = process.stderr.isTTY
    ? new cliProgress.SingleBar(
        { stream: process.stderr, format: "import {bar} {value}/{total} records" },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let started = false;
  const ended = await runImportJob(
    { db, config, logger: createLogger("silent") },
    created.id,
    (done, total) => {
      if (!bar) return;
      if (!started) {
        bar.start(total ?? 0, done);
        started = true;
      }
      if (total !== null) bar.setTotal(total);
      bar.update(done);
    },
    token,
  );
  bar?.stop();
  if (ended.status === "succeeded" && !ended.dry_run) await retireContentRevision(db, project.slug);
  print(toImport(ended));
  return ended.status === "succeeded" ? 0 : 1;
}

function print(value: unknown) {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

async function run(db: Db, args: string[]): Promise<number> {
  const [command, ...rest] = args;
  if (command === "import-from") return importFrom(db, rest);
  const positional = rest.filter((a, i) => !a.startsWith("--") && rest[i - 1] !== "--kind" && rest[i - 1] !== "--progress-interval");
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
      const interval = Number(optionValue(rest, "--progress-interval") ?? 2000);
      if (!Number.isInteger(interval) || interval < 0)
        throw new UsageError("import: --progress-interval must be a whole number of milliseconds");
      const progress = stderrProgress(interval);
      const ids = await importSnapshot(db, input, {
        replace: rest.includes("--replace"),
        onProgress: progress.sink,
        // Webhook URLs are judged as the owner route judges them on this configuration.
        allowPrivateWebhookUrls: parseConfig(process.env).WEBHOOK_ALLOW_PRIVATE_URLS,
      });
      progress.done();
      await retireContentRevision(db, ids.project.slug);
      print(ids);
      return 0;
    }
    case "export": {
      const slug = positional[0];
      if (!slug) throw new UsageError("export: name a project SLUG");
      print(await exportSnapshot(db, slug));
      return 0;
    }
    case "keys": {
      const [action, slug] = positional;
      if ((action !== "create" && action !== "regenerate") || !slug) {
        throw new UsageError("keys: create|regenerate SLUG --kind secret|embed");
      }
      const kind = kindOption(rest);
      const key = action === "create" ? await createKey(db, slug, kind) : await regenerateKey(db, slug, kind);
      process.stdout.write(`${key}\n`);
      return 0;
    }
    case "demo": {
      await importSnapshot(db, loadDemoSnapshot(), { replace: true });
      process.stdout.write(
        [
          `project:    ${DEMO_SLUG}`,
          `secret key: ${DEMO_SECRET_KEY}`,
          `embed key:  ${DEMO_EMBED_KEY}`,
          `anon token: ${DEMO_ANON_TOKEN}  (X-VF-Anon of a voter with history)`,
          "",
        ].join("\n"),
      );
      return 0;
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
    const config = parseConfig(process.env);
    handle = await openDatabase({
      DATABASE_URL: process.env.DATABASE_URL,
      PGLITE_DIR: process.env.PGLITE_DIR ?? "./data",
      // A running server holds the embedded database: the open is refused with one line naming it.
      holder: "npm run admin",
      // A replace holds its project's write lock for as long as it writes, and waits for the
      // writes under way first: neither the request bounds nor a lock bound apply to it. A stalled
      // admin transaction is still ended, like a server's.
      limits: {
        lockTimeoutMs: 0,
        statementTimeoutMs: config.DATABASE_ADMIN_STATEMENT_TIMEOUT_MS,
        idleInTransactionTimeoutMs: config.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      },
    });
    await migrateToLatest(handle.db);
    code = await run(handle.db, args);
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
