/**
 * Entry point (`npm start`): parse config, open and migrate the database, load the demo
 * project when the database holds none, serve (createServer, src/http-server.ts), and shut down
 * gracefully on SIGTERM/SIGINT (in-flight requests finish, new connections are refused, exit 0
 * within the grace period).
 */
import { writeFileSync } from "node:fs";
import { ZodError } from "zod";
import { pgliteDatabaseExists } from "../db/connect.ts";
import { DataDirInUseError } from "../db/data-dir-lock.ts";
import {
  allowDemoOrigins,
  type DemoProject,
  demoProject,
  ensureDemoProject,
  findServedDemo,
  replaceWellKnownDemoKeys,
  serverOrigins,
} from "./admin/demo-bootstrap.ts";
import { describeDemoCounts, preparedDemoDatabase } from "./admin/demo-database.ts";
import { type Config, parseConfig } from "./config.ts";
import { createLogger, type OpenedDeps, openDeps } from "./deps.ts";
import { createServer } from "./http-server.ts";
import { wellKnownDemoKeysAllowed } from "./lib/rules/published-demo-keys.ts";
import { listenFailureLine, listenProbe } from "./lib/runtime/node-http.ts";

/** Prints one line on stderr (no stack trace) and exits 1: for failures the operator fixes. */
function fail(line: string): never {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}

const started = performance.now();
let config: Config;
try {
  config = parseConfig(process.env);
} catch (error) {
  if (!(error instanceof ZodError)) throw error;
  fail(`error: invalid configuration: ${error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`);
}
// A busy port stops the start before the database is opened or migrated: a second `npm start`
// beside a running server leaves its data directory alone (docs/operations.md).
const portTaken = await listenProbe(config.HOST, config.PORT);
if (portTaken) fail(listenFailureLine(portTaken, config.HOST, config.PORT));
const logger = createLogger(config.LOG_LEVEL);
const demoWanted = config.DEMO !== "off";
// Someone trying the demo (DEMO=auto, the default) reads plain lines in the terminal, on stderr
// so that stdout stays the log stream; a deployment (DEMO=off) gets them as log records.
const progress = demoWanted ? (line: string) => void process.stderr.write(`${line}\n`) : (line: string) => logger.info(line);

// A new embedded database starts from the prepared demo database (the schema and the demo
// already in it) instead of running initdb and importing the demo: seconds instead of 20-40 s.
const newDemoDatabase = demoWanted && !config.DATABASE_URL && !pgliteDatabaseExists(config.PGLITE_DIR);
const prepared = newDemoDatabase ? preparedDemoDatabase() : undefined;
if (prepared && !prepared.usable) {
  progress(
    `demo: the prepared demo database is not used (${prepared.reasons.join("; ")}); run npx tsx scripts/demo/prepare-demo-database.ts to refresh it`,
  );
}
let deps: OpenedDeps;
try {
  deps = await openDeps(config, logger, {
    progress,
    holder: "npm start",
    ...(prepared?.usable ? { initialDataDir: prepared.tarball } : {}),
  });
} catch (error) {
  // Another process holds the embedded database's directory (db/data-dir-lock.ts).
  if (!(error instanceof DataDirInUseError)) throw error;
  fail(`error: ${error.message}`);
}

let demo: DemoProject | undefined;
if (demoWanted) {
  demo = await ensureDemoProject(deps.db, progress);
  if (!demo && prepared?.usable && deps.databaseCreated) {
    progress(`demo: demo project "${demoProject.slug}" came with the database (${describeDemoCounts(prepared.manifest.counts)})`);
    demo = demoProject;
  }
}
// The demo's keys are published (README, demo.ts): served beyond loopback they would hand the
// demo project's owner routes to anyone who reaches the port. Replaced before the first request.
let replacedKeys: DemoProject[] = [];
if (!wellKnownDemoKeysAllowed(config)) {
  replacedKeys = await replaceWellKnownDemoKeys(deps.db);
  for (const project of replacedKeys) {
    logger.warn(
      { project: project.slug, host: config.HOST },
      "the demo's published keys were replaced by random keys: HOST is not loopback (DEMO=public keeps them)",
    );
    if (demo?.slug === project.slug) {
      demo = { slug: demo.slug, secretKey: project.secretKey || demo.secretKey, embedKey: project.embedKey || demo.embedKey };
    }
  }
}
// The demo page (GET /demo) embeds the widget on the demo loaded now, or on the one an earlier
// start loaded, whose published embed key is still the project's (clients-v3.md, "The demo page").
const served = demo ?? (demoWanted ? await findServedDemo(deps.db, config) : undefined);
if (served?.embedKey) deps.demo = { slug: served.slug, embedKey: served.embedKey };
if (demo) {
  const base = `http://localhost:${config.PORT}/api/v3`;
  const replaced = replacedKeys.some((project) => project.slug === demo.slug);
  process.stdout.write(
    `${[
      "",
      `Demo board loaded: project "${demo.slug}"`,
      ...(replaced ? [`  HOST=${config.HOST} is not loopback: random keys replace the published demo keys (shown this once)`] : []),
      `  secret key: ${demo.secretKey}`,
      `  embed key:  ${demo.embedKey}`,
      `  try: curl -s -H 'X-API-Key: ${demo.secretKey}' '${base}/projects/${demo.slug}/features?sort=top&per_page=5'`,
      `  docs: ${base}/docs`,
      `  board in a browser: http://${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${config.PORT}/demo`,
      "",
    ].join("\n")}\n`,
  );
} else if (demoWanted) {
  // The demo was already there: its keys, if replaced just now, are shown this once. (With
  // DEMO=off they are not written to the log stream: create new ones with `npm run admin -- keys`.)
  for (const project of replacedKeys) {
    process.stdout.write(
      `${[
        "",
        `Demo keys of project "${project.slug}" replaced (HOST=${config.HOST} is not loopback; shown this once):`,
        ...(project.secretKey ? [`  secret key: ${project.secretKey}`] : []),
        ...(project.embedKey ? [`  embed key:  ${project.embedKey}`] : []),
        "",
      ].join("\n")}\n`,
    );
  }
}

// The demo page's widget writes from this server's own origin: the embed key must accept it
// before the first request (PORT=0, any free port, has no origin to name beforehand).
if (deps.demo && config.PORT !== 0) {
  const added = await allowDemoOrigins(deps.db, deps.demo.slug, serverOrigins(config, config.PORT), deps.caches);
  if (added.length > 0) progress(`demo: ${added.join(", ")} added to the allowed origins of "${deps.demo.slug}"`);
}

const server = createServer(deps);
try {
  const address = await server.start();
  const startupMs = Math.round(performance.now() - started);
  logger.info(
    {
      port: address.port,
      host: config.HOST,
      database: config.DATABASE_URL ? "postgres" : "pglite",
      redis: Boolean(config.REDIS_URL),
      startup_ms: startupMs,
    },
    "listening",
  );
  progress(`ready in ${(startupMs / 1000).toFixed(1)} s: http://${config.HOST}:${address.port}/api/v3`);
} catch (error) {
  fail(listenFailureLine(error as NodeJS.ErrnoException, config.HOST, config.PORT));
}

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down: finishing in-flight requests");
  const { graceful } = await server.stop();
  if (graceful) {
    logger.info("stopped");
    return;
  }
  // A request still waiting on the database may keep the event loop alive: stop anyway.
  setTimeout(() => process.exit(0), 250).unref();
}

process.on("SIGTERM", () => void shutdown("SIGTERM"));
// The bench's mixed load (scripts/bench/mixed.ts) reads the shared read cache's counts: on
// SIGUSR2 they are written to the file BENCH_READ_STATS names. Unset in any deployment.
const statsFile = process.env.BENCH_READ_STATS;
if (statsFile) {
  let asked = 0;
  process.on("SIGUSR2", () => writeFileSync(statsFile, JSON.stringify({ asked: ++asked, ...deps.caches.readStats })));
}
process.on("SIGINT", () => void shutdown("SIGINT"));
