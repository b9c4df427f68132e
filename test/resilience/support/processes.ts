/**
 * Every process the resilience suite starts is registered here, so that it is stopped even when
 * a test fails or the worker exits early: afterAll hooks stop them politely, and a process exit
 * hook SIGKILLs whatever is left (its whole process group) and removes temp directories.
 */
import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { createServer } from "node:net";

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();
let hooked = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    // Negative pid: the whole group (a postmaster and its backends, tsx and node, ...).
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

function cleanupSync(): void {
  for (const child of children) killGroup(child, "SIGKILL");
  children.clear();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.once("exit", cleanupSync);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      cleanupSync();
      process.exit(130);
    });
  }
}

/** Spawns a process in its own process group and registers it for cleanup. */
export function spawnTracked(command: string, args: string[], options: SpawnOptions = {}): ChildProcess {
  hookExit();
  const child = spawn(command, args, { ...options, detached: true });
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** Registers a directory to be removed at exit (and by `removeTempDir`). */
export function trackTempDir(dir: string): void {
  hookExit();
  tempDirs.add(dir);
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** Sends `signal` to the child's process group. */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  killGroup(child, signal);
}

/** Resolves with the exit code (or signal name) once the child has exited. */
export function waitForExit(
  child: ChildProcess,
  timeoutMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null } | "timeout"> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve("timeout"), timeoutMs);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

/** Stops a child: `signal` first, SIGKILL to its group after `graceMs`. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM", graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  killGroup(child, "SIGCONT");
  killGroup(child, signal);
  if ((await waitForExit(child, graceMs)) === "timeout") {
    killGroup(child, "SIGKILL");
    await waitForExit(child, 5000);
  }
  children.delete(child);
}

/** A free TCP port on the loopback interface. */
export async function sparePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      if (address === null || typeof address === "string") return reject(new Error("no port"));
      server.close(() => resolve(address.port));
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` every `intervalMs` until it returns true or `timeoutMs` passes; throws on timeout. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 30_000,
  intervalMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}
