/**
 * The API server as a child process (`node --import tsx src/server.ts`: the same entry as
 * `npx tsx src/server.ts`, without the npx and tsx wrapper processes, so that a signal reaches
 * the server itself and its exit code is the server's). Its stdout (pino JSON lines) is kept.
 */
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { sparePort, spawnTracked, stopChild, waitForExit, waitUntil } from "./processes.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

export interface ServerInstance {
  port: number;
  /** http://127.0.0.1:<port> */
  origin: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** stdout lines that parse as JSON (pino records). */
  logRecords(): Record<string, unknown>[];
  exited(timeoutMs: number): ReturnType<typeof waitForExit>;
  stop(): Promise<void>;
}

export async function startServer(env: Record<string, string>): Promise<ServerInstance> {
  const port = await sparePort();
  let stdout = "";
  let stderr = "";
  const child = spawnTracked(process.execPath, ["--import", "tsx", "src/server.ts"], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
      NODE_ENV: "production",
      HOST: "127.0.0.1",
      PORT: String(port),
      DEMO: "off",
      LOG_LEVEL: "info",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  try {
    await waitUntil(
      "the server to log that it is listening",
      () => {
        if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}): ${stderr || stdout}`);
        return /"msg":"listening"/.test(stdout);
      },
      60_000,
      100,
    );
  } catch (error) {
    await stopChild(child, "SIGKILL");
    throw new Error(`${(error as Error).message}\nstdout: ${stdout}\nstderr: ${stderr}`);
  }
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    child,
    output: () => stdout + stderr,
    logRecords: () =>
      stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .flatMap((line) => {
          try {
            return [JSON.parse(line) as Record<string, unknown>];
          } catch {
            return [];
          }
        }),
    exited: (timeoutMs) => waitForExit(child, timeoutMs),
    stop: () => stopChild(child, "SIGTERM", 10_000),
  };
}

/**
 * For a failure message: the server's log records of requests that took 2 s or more (the first
 * 20), then its last 10 warnings and errors (pino levels 40 and up), one JSON line each.
 */
export function serverTrouble(server: ServerInstance): string {
  const records = server.logRecords();
  const line = (record: Record<string, unknown>) => JSON.stringify(record).slice(0, 600);
  const slow = records.filter((record) => record.msg === "request" && Number(record.ms) >= 2000).slice(0, 20);
  const trouble = records.filter((record) => Number(record.level) >= 40).slice(-10);
  return [
    `the server's requests of 2 s or more (${slow.length}):`,
    ...slow.map(line),
    `its last warnings and errors (${trouble.length}):`,
    ...trouble.map(line),
  ].join("\n");
}
