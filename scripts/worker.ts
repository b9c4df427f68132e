/**
 * `npm run worker`: the webhook dispatcher and delivery worker alone (with the periodic tasks of
 * src/background-tasks.ts: scheduled releases, the notification consumer; the import runner; and
 * the email worker when SMTP_URL is set), without the HTTP server,
 * for deployments that run it apart (then set WEBHOOK_WORKER=off on the servers). Same
 * configuration as the server (DATABASE_URL, WEBHOOK_*); stops on SIGTERM/SIGINT after the
 * attempts under way finish (at most SHUTDOWN_GRACE_SECONDS, then their claims are given back).
 */
import { ZodError } from "zod";
import { BACKGROUND_TASKS } from "../src/background-tasks.ts";
import { type Config, parseConfig } from "../src/config.ts";
import { createLogger, openDeps } from "../src/deps.ts";
import { startEmailWorker } from "../src/events/email/email-worker.ts";
import { startWebhookWorker } from "../src/events/webhook-worker.ts";
import { startImportWorker } from "../src/routes/imports/index.ts";

let config: Config;
try {
  config = parseConfig(process.env);
} catch (error) {
  if (!(error instanceof ZodError)) throw error;
  process.stderr.write(
    `error: invalid configuration: ${error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}\n`,
  );
  process.exit(1);
}
if (!config.DATABASE_URL) {
  // The embedded database is single-process: a worker apart from the server cannot share it.
  process.stderr.write(
    "error: npm run worker needs DATABASE_URL (the embedded database serves one process: the server runs its own worker)\n",
  );
  process.exit(1);
}
const logger = createLogger(config.LOG_LEVEL);
const deps = await openDeps(config, logger);
const worker = await startWebhookWorker(deps, { tasks: BACKGROUND_TASKS });
logger.info({ concurrency: config.WEBHOOK_CONCURRENCY }, "webhook worker started");
// The email digests and sending (docs/email.md), when SMTP_URL is set.
const emailWorker = startEmailWorker(deps);
// The import runner (imports-v3.md, "How an import runs").
const importWorker = startImportWorker(deps);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "webhook worker stopping");
  const graceMs = Math.max(0, config.SHUTDOWN_GRACE_SECONDS * 1000 - 1000);
  await Promise.all([worker.stop(graceMs), emailWorker?.stop(graceMs), importWorker.stop(graceMs)]);
  await deps.close();
  logger.info("webhook worker stopped");
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
