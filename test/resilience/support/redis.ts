/**
 * A dedicated redis-server on a spare loopback port, with no persistence (a restart starts
 * empty), that a test can SIGKILL, SIGSTOP/SIGCONT and start again on the same port.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { removeTempDir, signalGroup, sparePort, spawnTracked, stopChild, trackTempDir, waitForExit, waitUntil } from "./processes.ts";

export interface RedisInstance {
  port: number;
  url: string;
  /** A client for the test's own looks at the data (no key prefix). */
  client(): Redis;
  /** SIGKILL: the process dies with everything it held. */
  kill(): Promise<void>;
  /** SIGSTOP: the process keeps its sockets open but answers nothing. */
  hang(): void;
  /** SIGCONT after hang(). */
  resume(): void;
  /** Starts a new process on the same port (after kill). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startRedis(): Promise<RedisInstance> {
  const port = await sparePort();
  const dir = mkdtempSync(join(tmpdir(), "fb-res-redis-"));
  trackTempDir(dir);
  let child: ChildProcess | undefined;
  const clients: Redis[] = [];

  async function launch(): Promise<void> {
    child = spawnTracked(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--loglevel", "warning"],
      { stdio: "ignore" },
    );
    await waitUntil(
      `redis on port ${port}`,
      async () => {
        const probe = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        probe.on("error", () => {});
        try {
          await probe.connect();
          return (await probe.ping()) === "PONG";
        } finally {
          probe.disconnect();
        }
      },
      15_000,
    );
  }

  await launch();
  const url = `redis://127.0.0.1:${port}`;
  return {
    port,
    url,
    client() {
      const client = new Redis({ port, host: "127.0.0.1", maxRetriesPerRequest: 1 });
      client.on("error", () => {});
      clients.push(client);
      return client;
    },
    async kill() {
      if (!child) return;
      signalGroup(child, "SIGKILL");
      await waitForExit(child, 5000);
    },
    hang() {
      if (child) signalGroup(child, "SIGSTOP");
    },
    resume() {
      if (child) signalGroup(child, "SIGCONT");
    },
    restart: launch,
    async close() {
      for (const client of clients) client.disconnect();
      if (child) await stopChild(child, "SIGKILL");
      removeTempDir(dir);
    },
  };
}
