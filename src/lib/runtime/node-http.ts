/**
 * The Node HTTP server's side of the request path: its timeouts, the line printed when it
 * cannot listen, and what becomes of a request body the app did not read to its end.
 */
import type { IncomingMessage, ServerOptions } from "node:http";
import { createServer as createNetServer } from "node:net";
import type { Config } from "../../config.ts";

/**
 * http.createServer options from the config (seconds to milliseconds). Node checks its
 * timeouts every connectionsCheckingInterval, 30 s by default, which would let a 30 s request
 * run to a minute: once a second keeps the cut within a second of the limit.
 */
export function httpServerOptions(config: Config): ServerOptions {
  return {
    headersTimeout: config.HTTP_HEADERS_TIMEOUT_SECONDS * 1000,
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_SECONDS * 1000,
    keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_SECONDS * 1000,
    connectionsCheckingInterval: 1000,
  };
}

/** The one line `npm start` prints when the server cannot listen (no stack trace). */
export function listenFailureLine(error: NodeJS.ErrnoException, host: string, port: number): string {
  const where = `${host}:${port}`;
  switch (error.code) {
    case "EADDRINUSE":
      return `error: port ${port} on ${host} is in use (EADDRINUSE); stop the other process or set PORT`;
    case "EACCES":
      return `error: no permission to listen on ${where} (EACCES); use a port above 1023 or set PORT`;
    case "EADDRNOTAVAIL":
      return `error: ${host} is not an address of this machine (EADDRNOTAVAIL); set HOST`;
    default:
      return `error: cannot listen on ${where} (${error.code ?? "unknown"}): ${error.message}`;
  }
}

/**
 * Listens on `host:port` and closes again at once: resolves undefined when the server could
 * listen there, else the listen error (EADDRINUSE, EACCES, EADDRNOTAVAIL; listenFailureLine
 * words it). `npm start` asks before it opens the database, so that a second start beside a
 * running one stops on the port without touching the data directory (docs/operations.md,
 * "The embedded database is one process"). Port 0 (any free port) always passes.
 */
export function listenProbe(host: string, port: number): Promise<NodeJS.ErrnoException | undefined> {
  if (port === 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const probe = createNetServer();
    probe.once("error", (error: NodeJS.ErrnoException) => resolve(error));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

/**
 * Discards what is left of a request body the app stopped reading (an early 401, 429 or 422),
 * keeping the connection alive for the client's next request. hono's body stream leaves the
 * message paused, which stops Node's parser reading the socket: the next request on a kept-alive
 * connection then got no answer. Past `maxBytes` of discarded body the connection is cut; a body
 * slower than the server's requestTimeout is cut by Node.
 */
export function discardRestOfBody(incoming: IncomingMessage, maxBytes: number): void {
  if (incoming.readableEnded || incoming.destroyed) return;
  // Only the web stream's listener reads 'data' here; with none the chunks are dropped.
  incoming.removeAllListeners("data");
  let discarded = 0;
  incoming.on("data", (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > maxBytes) incoming.socket.destroy();
  });
  incoming.resume();
}

/** How long, and how many more body bytes, a connection closed after a 413 keeps reading. */
export const LINGER = { ms: 3000, bytes: 8 * 1024 * 1024 } as const;

/**
 * Closes the connection once the response (which must carry `Connection: close`) is written,
 * without losing it to a reset: Node's own close destroys the socket as soon as the response is
 * flushed, and closing a socket with body bytes still arriving sends an RST that can reach the
 * client before it reads the answer (or fail its upload first). Here the server sends FIN after
 * the response, discards the rest of the body, and closes when the body has ended, or after
 * LINGER.ms or LINGER.bytes, whichever comes first.
 */
export function closeAfterResponse(incoming: IncomingMessage): void {
  discardRestOfBody(incoming, LINGER.bytes);
  const socket = incoming.socket;
  const destroySoon = socket.destroySoon;
  // Node calls destroySoon() on the socket when a response marked Connection: close finishes.
  socket.destroySoon = function lingeringClose() {
    socket.destroySoon = destroySoon;
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER.ms);
    timer.unref();
    socket.once("close", () => clearTimeout(timer));
    if (incoming.readableEnded) socket.destroySoon();
    else incoming.once("end", () => socket.destroySoon());
  };
}
