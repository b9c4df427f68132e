/**
 * A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records every request and
 * verifies its signature with the `standardwebhooks` package itself (the receiver side of the
 * Standard Webhooks specification), against each secret it was told. Its answer is scripted per
 * request (status, redirect, delay, hang, a huge body sent in chunks), and it can go down and
 * come back up on the same port.
 *
 *   const receiver = await startWebhookReceiver();
 *   receiver.trust(secret);                       // from POST /webhooks
 *   ... make events, run a worker ...
 *   await receiver.waitFor((all) => all.length >= 3);
 *   expect(receiver.received.every((r) => r.verified)).toBe(true);
 *
 * Note: on a shared Postgres (DATABASE_URL), any worker running in the test run may make a
 * delivery; count by `webhook-id` and `webhookUrl`, not by which process sent it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Webhook } from "standardwebhooks";

/** How the receiver answers one request. */
export interface ReceiverAnswer {
  /** HTTP status (default 204). */
  status?: number;
  headers?: Record<string, string>;
  /** Body text (ignored when bodyBytes is set). */
  body?: string;
  /** Milliseconds to wait before answering. */
  delayMs?: number;
  /** Never answer (the connection stays open until the client gives up). */
  hang?: boolean;
  /** Send a body of this many bytes ("x"), in chunks of chunkBytes every chunkIntervalMs. */
  bodyBytes?: number;
  chunkBytes?: number;
  chunkIntervalMs?: number;
}

/** One request as the receiver saw it. */
export interface ReceivedRequest {
  /** Path and query. */
  path: string;
  /** Host header as received. */
  host: string | undefined;
  headers: Record<string, string>;
  /** webhook-id header. */
  id: string;
  body: string;
  /** Parsed body (null if not JSON). */
  payload: any;
  /** True when the signature verified with at least one trusted secret. */
  verified: boolean;
  /** The trusted secrets whose verification succeeded. */
  verifiedBy: string[];
  /** Status the receiver answered (null: it never answered). */
  status: number | null;
  receivedAt: number;
  /** Bytes of the answer body written before the connection ended; whether it was written whole. */
  bodyBytesWritten: number;
  bodyComplete: boolean;
}

export interface WebhookReceiver {
  /** Base URL, e.g. http://127.0.0.1:41234 (paths are free: use one per webhook). */
  readonly url: string;
  readonly port: number;
  readonly received: ReceivedRequest[];
  /** Adds a secret signatures are verified against. */
  trust(secret: string): void;
  /** Sets how the next requests are answered (per request; default 204). */
  answer(script: (request: ReceivedRequest) => ReceiverAnswer): void;
  /** Stops listening (connections refused) until `up()`. */
  down(): Promise<void>;
  up(): Promise<void>;
  /** Resolves once `predicate(received)` holds; rejects after `timeoutMs`. */
  waitFor(predicate: (received: ReceivedRequest[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Requests whose path starts with `path`. */
  on(path: string): ReceivedRequest[];
  close(): Promise<void>;
}

function verify(body: string, headers: Record<string, string>, secrets: string[]): string[] {
  return secrets.filter((secret) => {
    try {
      new Webhook(secret).verify(body, headers);
      return true;
    } catch {
      return false;
    }
  });
}

/** Starts a receiver on 127.0.0.1 (a free port unless `port` is given). */
export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const secrets: string[] = [];
  const received: ReceivedRequest[] = [];
  let script: (request: ReceivedRequest) => ReceiverAnswer = () => ({});
  const sockets = new Set<Socket>();
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const waiter of waiters) waiter();
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers[name] = value;
      let payload: any = null;
      try {
        payload = JSON.parse(body);
      } catch {
        payload = null;
      }
      const verifiedBy = verify(body, headers, secrets);
      const record: ReceivedRequest = {
        path: req.url ?? "/",
        host: req.headers.host,
        headers,
        id: headers["webhook-id"] ?? "",
        body,
        payload,
        verified: verifiedBy.length > 0,
        verifiedBy,
        status: null,
        receivedAt: Date.now(),
        bodyBytesWritten: 0,
        bodyComplete: false,
      };
      received.push(record);
      notify();
      const answer = script(record);
      if (answer.hang) return;
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      if (res.destroyed) return;
      record.status = answer.status ?? 204;
      if (answer.bodyBytes === undefined) {
        res.writeHead(record.status, answer.headers);
        res.end(answer.body ?? "");
        record.bodyBytesWritten = Buffer.byteLength(answer.body ?? "");
        record.bodyComplete = true;
        notify();
        return;
      }
      res.writeHead(record.status, { "content-length": String(answer.bodyBytes), ...answer.headers });
      const chunk = Buffer.alloc(answer.chunkBytes ?? 65536, "x");
      while (record.bodyBytesWritten < answer.bodyBytes && !res.destroyed) {
        const size = Math.min(chunk.length, answer.bodyBytes - record.bodyBytesWritten);
        res.write(chunk.subarray(0, size));
        record.bodyBytesWritten += size;
        if (answer.chunkIntervalMs) await new Promise((resolve) => setTimeout(resolve, answer.chunkIntervalMs));
      }
      if (!res.destroyed) {
        res.end();
        record.bodyComplete = true;
      }
      notify();
    });
  };

  let server: Server = createServer(handle);
  const listen = (onPort: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(onPort, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
    });
  const track = (s: Server) =>
    s.on("connection", (socket: Socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
  track(server);
  const boundPort = await listen(port);
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });

  return {
    url: `http://127.0.0.1:${boundPort}`,
    port: boundPort,
    received,
    trust(secret) {
      secrets.push(secret);
    },
    answer(next) {
      script = next;
    },
    async down() {
      await stop();
    },
    async up() {
      server = createServer(handle);
      track(server);
      await listen(boundPort);
    },
    waitFor(predicate, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(received)) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`receiver: condition not met within ${timeoutMs} ms (${received.length} requests received)`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    on(path) {
      return received.filter((request) => request.path.startsWith(path));
    },
    async close() {
      await stop();
    },
  };
}
