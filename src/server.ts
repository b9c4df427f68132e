/**
 * Entry point (`npm start`): parse config, open and migrate the database, load the demo
 * project when the database holds none, serve, and shut down gracefully on SIGTERM/SIGINT
 * (in-flight requests finish, new connections are refused, exit 0 within the grace period).
 */
import type { Server as HttpServer } from "node:http";
import { serve } from "@hono/node-server";
import { ZodError } from "zod";
import { pgliteDatabaseExists } from "../db/connect.ts";
import { createApp } from "./app.ts";
import { type Config, parseConfig } from "./config.ts";
import { createLogger, openDeps } from "./deps.ts";
import { type DemoProject, demoProject, ensureDemoProject, replaceWellKnownDemoKeys } from "./admin/demo-bootstrap.ts";
import { wellKnownDemoKeysAllowed } from "./lib/rules/published-demo-keys.ts";
import { describeDemoCounts, preparedDemoDatabase } from "./admin/demo-database.ts";
import { httpServerOptions, listenFailureLine } from "./lib/runtime/node-http.ts";
import { BACKGROUND_TASKS } from "./background-tasks.ts";
import { startWebhookWorker } from "./events/webhook-worker.ts";

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
const deps = await openDeps(config, logger, { progress, ...(prepared?.usable ? { initialDataDir: prepared.tarball } : {}) });

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

const app = createApp(deps);
// Webhook dispatcher, delivery worker and periodic tasks (WEBHOOK_WORKER=off leaves them to `npm run worker`).
const worker = config.WEBHOOK_WORKER === "on" ? await startWebhookWorker(deps, { tasks: BACKGROUND_TASKS }) : undefined;
let listening = false;
// serve() is typed for HTTP/2 too; this server is always HTTP/1.1 (no createServer option).
const server = serve(
  {
    fetch: app.fetch,
    port: config.PORT,
    hostname: config.HOST,
    serverOptions: httpServerOptions(config),
    // The body middleware discards what the app leaves unread (middleware/request-body.ts); the
    // library's own clean-up closes a kept-alive connection whose body is slower than 500 ms.
    autoCleanupIncoming: false,
  },
  (info) => {
    listening = true;
    const startupMs = Math.round(performance.now() - started);
    logger.info(
      {
        port: info.port,
        host: config.HOST,
        database: config.DATABASE_URL ? "postgres" : "pglite",
        redis: Boolean(config.REDIS_URL),
        startup_ms: startupMs,
      },
      "listening",
    );
    progress(`ready in ${(startupMs / 1000).toFixed(1)} s: http://${config.HOST}:${info.port}/api/v3`);
  },
) as HttpServer;
server.on("error", (error: NodeJS.ErrnoException) => {
  if (!listening) fail(listenFailureLine(error, config.HOST, config.PORT));
  logger.error({ err: error }, "server error");
});

let stopping = false;
// While stopping, every response closes its keep-alive connection: otherwise a busy client's
// connection stays open (and keeps being served) until the grace period runs out. Prepended so it
// runs before hono's handler, which may answer a cached read synchronously.
server.prependListener("request", (_req, res) => {
  if (stopping && !res.headersSent) res.setHeader("Connection", "close");
});

async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down: finishing in-flight requests");
  const deadline = setTimeout(() => {
    logger.warn("grace period over; closing remaining connections");
    server.closeAllConnections();
    // A request still waiting on the database keeps deps.close() from returning: stop anyway.
    setTimeout(() => process.exit(0), 250).unref();
  }, config.SHUTDOWN_GRACE_SECONDS * 1000);
  deadline.unref();
  // server.close() closes the connections idle at this moment only; a keep-alive connection whose
  // last answer was already on its way becomes idle later, so keep closing idle ones until done.
  server.closeIdleConnections();
  const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
  idleSweep.unref();
  // Attempts under way get half the grace period (at most 5 s), then give their claims back.
  const workerStopped = worker?.stop(Math.min(5000, config.SHUTDOWN_GRACE_SECONDS * 500));
  await new Promise<void>((resolve) => server.close(() => resolve()));
  clearInterval(idleSweep);
  await workerStopped;
  await deps.close();
  clearTimeout(deadline);
  logger.info("stopped");
}

process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
