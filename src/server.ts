/**
 * Entry point (`npm start`): parse config, open and migrate the database, load the demo
 * project when the database holds none, serve, and shut down gracefully on SIGTERM/SIGINT
 * (in-flight requests finish, new connections are refused, exit 0 within the grace period).
 */
import { serve } from "@hono/node-server";
import { createApp } from "./app.ts";
import { parseConfig } from "./config.ts";
import { createLogger, openDeps } from "./deps.ts";
import { ensureDemoProject } from "./admin/demo-bootstrap.ts";

const config = parseConfig(process.env);
const logger = createLogger(config.LOG_LEVEL);
const deps = await openDeps(config, logger);

if (config.DEMO === "auto") {
  const demo = await ensureDemoProject(deps.db);
  if (demo) {
    const base = `http://localhost:${config.PORT}/api/v3`;
    process.stdout.write(
      [
        "",
        `Demo board loaded: project "${demo.slug}"`,
        `  secret key: ${demo.secretKey}`,
        `  embed key:  ${demo.embedKey}`,
        `  try: curl -s -H 'X-API-Key: ${demo.secretKey}' '${base}/projects/${demo.slug}/features?sort=top&per_page=5'`,
        `  docs: ${base}/docs`,
        "",
      ].join("\n") + "\n",
    );
  }
}

const app = createApp(deps);
const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, (info) => {
  logger.info({ port: info.port, host: config.HOST, database: config.DATABASE_URL ? "postgres" : "pglite", redis: Boolean(config.REDIS_URL) }, "listening");
});

let stopping = false;
// While stopping, every response closes its keep-alive connection: otherwise a busy client's
// connection stays open (and keeps being served) until the grace period runs out.
server.on("request", (_req, res) => {
  if (stopping && !res.headersSent) res.setHeader("Connection", "close");
});

async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down: finishing in-flight requests");
  const deadline = setTimeout(() => {
    logger.warn("grace period over; closing remaining connections");
    (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
    // A request still waiting on the database keeps deps.close() from returning: stop anyway.
    setTimeout(() => process.exit(0), 250).unref();
  }, config.SHUTDOWN_GRACE_SECONDS * 1000);
  deadline.unref();
  (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await deps.close();
  clearTimeout(deadline);
  logger.info("stopped");
}

process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
