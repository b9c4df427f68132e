/**
 * The admin command line (scripts/admin.ts, docs/contract/project-snapshot.md "Commands") as a child
 * process, the way owners and other tools run it.
 */
import { fileURLToPath } from "node:url";
import { spawnTracked, stopChild, waitForExit } from "./processes.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

export interface AdminRun {
  /** Exit code, or "timeout" when it did not end within the limit (it is then killed). */
  code: number | null | "timeout";
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs `admin <args>` against `databaseUrl` (and `redisUrl`, if given) and resolves when it exits
 * or after `timeoutMs`.
 */
export async function runAdmin(
  args: string[],
  databaseUrl: string,
  options: { redisUrl?: string; timeoutMs?: number } = {},
): Promise<AdminRun> {
  const timeoutMs = options.timeoutMs ?? 90_000;
  const started = performance.now();
  const child = spawnTracked(process.execPath, ["--import", "tsx", "scripts/admin.ts", ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
      DATABASE_URL: databaseUrl,
      ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exit = await waitForExit(child, timeoutMs);
  if (exit === "timeout") await stopChild(child, "SIGKILL");
  // Let the pipes drain after the exit.
  await new Promise((resolve) => setImmediate(resolve));
  return { code: exit === "timeout" ? "timeout" : exit.code, stdout, stderr, ms: performance.now() - started };
}
