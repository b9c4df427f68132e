/**
 * A TCP proxy on loopback that delays what passes through it, for precise control over a slow
 * Redis (or any server): every chunk, in either direction, is forwarded `delayMs` after it
 * arrived, in order; `pause()` holds everything until `resume()`; `resetConnections()` drops
 * every connection with what it still holds (those bytes are never delivered).
 */
import { connect, createServer, type Server, type Socket } from "node:net";
import { sleep } from "./processes.ts";

export interface DelayProxy {
  port: number;
  /** redis://127.0.0.1:<port> (the scheme is only a convenience for Redis clients). */
  url: string;
  /** Delay for chunks arriving from now on (ms); 0 forwards at once behind what waits. */
  setDelay(ms: number): void;
  /** Holds every chunk (both directions) until resume() or resetConnections(). */
  pause(): void;
  resume(): void;
  /** Destroys every proxied connection; bytes still held are dropped, never delivered. */
  resetConnections(): void;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

export async function startDelayProxy(targetPort: number, targetHost = "127.0.0.1"): Promise<DelayProxy> {
  if (!["127.0.0.1", "localhost", "::1"].includes(targetHost)) throw new Error(`refusing non-loopback ${targetHost}`);
  let delayMs = 0;
  let paused = false;
  let accepted = 0;
  const pairs = new Set<{ client: Socket; upstream: Socket; closed: boolean }>();

  /** Forwards `from` to `to` in order, each chunk no earlier than its arrival + the delay. */
  function pipe(from: Socket, to: Socket, pair: { closed: boolean }): void {
    let chain = Promise.resolve();
    from.on("data", (chunk: Buffer) => {
      const due = performance.now() + delayMs;
      chain = chain.then(async () => {
        for (;;) {
          if (pair.closed) return;
          const wait = due - performance.now();
          if (!paused && wait <= 0) break;
          await sleep(paused ? 10 : Math.min(wait, 50));
        }
        to.write(chunk);
      });
    });
  }

  const server: Server = createServer((client) => {
    accepted++;
    const upstream = connect(targetPort, targetHost);
    const pair = { client, upstream, closed: false };
    pairs.add(pair);
    const close = () => {
      if (pair.closed) return;
      pair.closed = true;
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.setNoDelay(true);
      socket.on("error", close);
      socket.on("close", close);
    }
    pipe(client, upstream, pair);
    pipe(upstream, client, pair);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  const destroyAll = () => {
    for (const pair of [...pairs]) {
      pair.closed = true;
      pairs.delete(pair);
      pair.client.destroy();
      pair.upstream.destroy();
    }
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    setDelay(ms) {
      delayMs = ms;
    },
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
    },
    resetConnections: destroyAll,
    connections: () => accepted,
    async close() {
      paused = false;
      destroyAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
