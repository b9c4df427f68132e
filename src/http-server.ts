/**
 * createServer(deps): the app served over Node HTTP with the webhook worker (and the import
 * runner) beside it, as one
 * object that starts and stops, so start-up and graceful shutdown are tested in process
 * (test/http-server.test.ts) and the entry point (src/server.ts) only adds configuration, the
 * demo and signals. In front of the app's Node listener sits the hit path before the app
 * (src/middleware/early-hit.ts), which answers most cached public reads without it.
 */
import {
  createServer as createHttpServer,
  type Server as HttpServer,
  type ServerOptions as HttpServerOptions,
  type RequestListener,
} from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { createApp } from "./app.ts";
import { BACKGROUND_TASKS } from "./background-tasks.ts";
import type { OpenedDeps } from "./deps.ts";
import { type EmailWorker, startEmailWorker } from "./events/email/email-worker.ts";
import { startWebhookWorker, type WebhookWorker } from "./events/webhook-worker.ts";
import { httpServerOptions } from "./lib/runtime/node-http.ts";
import { earlyHitListener } from "./middleware/early-hit.ts";
import { type ImportWorker, startImportWorker } from "./routes/imports/index.ts";

export interface BoardServer {
  /** The application (createApp(deps)); requests can also be made in process with app.request. */
  app: ReturnType<typeof createApp>;
  /**
   * Starts the webhook worker (unless WEBHOOK_WORKER=off) and listens on config.HOST and
   * config.PORT (0: any free port). Resolves with the bound address; rejects with the listen
   * error (EADDRINUSE, EACCES...).
   */
  start(): Promise<AddressInfo>;
  /**
   * Graceful shutdown: refuses new connections, lets in-flight requests finish (each answer
   * closes its keep-alive connection), stops the worker (attempts under way get half the grace
   * period, at most 5 s), then closes the deps. After SHUTDOWN_GRACE_SECONDS the remaining
   * connections are closed. Resolves `{ graceful }`: false when the grace period ran out (the
   * entry point then exits without waiting for the deps).
   */
  stop(): Promise<{ graceful: boolean }>;
}

export interface BoardServerOptions {
  /**
   * Answer cached public reads before the app (src/middleware/early-hit.ts); default true.
   * false sends every request through the app: for tests comparing the two paths' answers.
   */
  earlyHits?: boolean;
}

/** Builds the server of `deps`; nothing listens until start(). */
export function createServer(deps: OpenedDeps, options: BoardServerOptions = {}): BoardServer {
  const { config, logger } = deps;
  const app = createApp(deps);
  let server: HttpServer | undefined;
  let worker: WebhookWorker | undefined;
  let emailWorker: EmailWorker | undefined;
  let importWorker: ImportWorker | undefined;
  let stopping: Promise<{ graceful: boolean }> | undefined;
  let closing = false;

  async function start(): Promise<AddressInfo> {
    worker = config.WEBHOOK_WORKER === "on" ? await startWebhookWorker(deps, { tasks: BACKGROUND_TASKS }) : undefined;
    // Beside the webhook worker: the email digests and sending (docs/email.md), when SMTP_URL is set.
    emailWorker = config.WEBHOOK_WORKER === "on" ? startEmailWorker(deps) : undefined;
    // And the import runner (imports-v3.md, "How an import runs"): any instance may claim a job.
    importWorker = config.WEBHOOK_WORKER === "on" ? startImportWorker({ ...deps, liveProgress: deps.importProgress }) : undefined;
    return new Promise<AddressInfo>((resolve, reject) => {
      // serve() is typed for HTTP/2 too; this server is always HTTP/1.1 (node:http's createServer).
      const listening = serve(
        {
          fetch: app.fetch,
          port: config.PORT,
          hostname: config.HOST,
          serverOptions: httpServerOptions(config),
          // The body middleware discards what the app leaves unread (middleware/request-body.ts);
          // the library's own clean-up closes a kept-alive connection whose body is slower than 500 ms.
          autoCleanupIncoming: false,
          // The early hit path in front of the app's listener (src/middleware/early-hit.ts).
          ...(options.earlyHits === false
            ? {}
            : {
                createServer: ((serverOptions: HttpServerOptions, appListener: RequestListener) =>
                  createHttpServer(serverOptions, earlyHitListener(deps, appListener))) as typeof createHttpServer,
              }),
        },
        (info) => resolve(info),
      ) as HttpServer;
      server = listening;
      listening.once("error", reject);
      listening.on("error", (error) => logger.error({ err: error }, "server error"));
      // While stopping, every response closes its keep-alive connection: otherwise a busy
      // client's connection stays open (and keeps being served) until the grace period runs out.
      // Prepended so it runs before the early hit path and hono's handler, which write the head.
      listening.prependListener("request", (_req, res) => {
        if (closing && !res.headersSent) res.setHeader("Connection", "close");
      });
    });
  }

  async function shutdown(): Promise<{ graceful: boolean }> {
    closing = true;
    let graceful = true;
    let expired: () => void = () => {};
    const deadlinePassed = new Promise<void>((resolve) => {
      expired = resolve;
    });
    const deadline = setTimeout(() => {
      graceful = false;
      logger.warn("grace period over; closing remaining connections");
      server?.closeAllConnections();
      expired();
    }, config.SHUTDOWN_GRACE_SECONDS * 1000);
    deadline.unref();
    // server.close() closes the connections idle at this moment only; a keep-alive connection
    // whose last answer was already on its way becomes idle later, so keep closing idle ones.
    server?.closeIdleConnections();
    const idleSweep = setInterval(() => server?.closeIdleConnections(), 100);
    idleSweep.unref();
    const workerStopped = Promise.all([
      worker?.stop(Math.min(5000, config.SHUTDOWN_GRACE_SECONDS * 500)),
      emailWorker?.stop(Math.min(5000, config.SHUTDOWN_GRACE_SECONDS * 500)),
      importWorker?.stop(Math.min(5000, config.SHUTDOWN_GRACE_SECONDS * 500)),
    ]);
    if (server) {
      const closed = server;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
    }
    clearInterval(idleSweep);
    await workerStopped;
    // A request still waiting on the database keeps deps.close() from returning: past the
    // deadline the caller gets its answer without waiting for it.
    await Promise.race([deps.close(), deadlinePassed]);
    clearTimeout(deadline);
    return { graceful };
  }

  return {
    app,
    start,
    stop: () => {
      stopping ??= shutdown();
      return stopping;
    },
  };
}
