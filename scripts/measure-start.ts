/**
 * Measures a first start: runs `npm start` on an empty PGlite directory (a temp dir, removed
 * afterwards) and reports the seconds until the demo board answers 200, the seconds until each
 * line the server printed, and the server process's resident memory (VmRSS when the demo
 * answered, and VmHWM, its peak). Loopback only; stops the server with SIGTERM.
 *
 *   npx tsx scripts/measure-start.ts            # one run, human-readable
 *   npx tsx scripts/measure-start.ts --json     # one JSON line: { servedMs, rssMb, peakRssMb, lines }
 *
 * Exit code 1 when the demo is not served within 120 s or the server exits early.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEMO_SECRET_KEY, DEMO_SLUG } from "../src/admin/demo.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const LIMIT_MS = 120_000;

/** A free loopback port. */
function sparePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Kilobytes of `field` (VmRSS, VmHWM) in /proc/<pid>/status, or 0 when unreadable. */
function procKb(pid: number, field: string): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** Pids of every descendant of `pid` (npm -> sh -> node; `exec` in the script removes sh). */
function descendants(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${entry}/status`, "utf8"))?.[1]);
      if (ppid === pid) found.push(Number(entry), ...descendants(Number(entry)));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The server process: the descendant with the largest resident set. */
function serverPid(npmPid: number): number | undefined {
  return descendants(npmPid).sort((a, b) => procKb(b, "VmRSS") - procKb(a, "VmRSS"))[0];
}

async function measure() {
  const dir = mkdtempSync(join(tmpdir(), "fb-first-start-"));
  const port = await sparePort();
  const started = performance.now();
  const child = spawn("npm", ["start", "--silent"], {
    cwd: ROOT,
    env: {
      ...process.env,
      PGLITE_DIR: join(dir, "data"),
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: "",
      REDIS_URL: "",
      DEMO: "auto",
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const lines: Array<{ s: number; line: string }> = [];
  let pending = "";
  const collect = (chunk: Buffer) => {
    pending += chunk.toString("utf8");
    const parts = pending.split("\n");
    pending = parts.pop()!;
    for (const line of parts) if (line.trim()) lines.push({ s: (performance.now() - started) / 1000, line });
  };
  child.stdout!.on("data", collect);
  child.stderr!.on("data", collect);
  let exited = false;
  child.once("exit", () => (exited = true));
  const url = `http://127.0.0.1:${port}/api/v3/projects/${DEMO_SLUG}/features?sort=top&per_page=5`;
  let servedMs: number | undefined;
  let pid: number | undefined;
  try {
    while (performance.now() - started < LIMIT_MS && !exited) {
      pid ??= serverPid(child.pid!);
      try {
        const response = await fetch(url, { headers: { "X-API-Key": DEMO_SECRET_KEY } });
        await response.arrayBuffer();
        if (response.status === 200) {
          servedMs = performance.now() - started;
          break;
        }
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    pid = serverPid(child.pid!) ?? pid;
    const rssMb = pid ? procKb(pid, "VmRSS") / 1024 : 0;
    const peakRssMb = pid ? procKb(pid, "VmHWM") / 1024 : 0;
    return { servedMs, rssMb, peakRssMb, lines };
  } finally {
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      // already gone
    }
    await new Promise((resolve) => (exited ? resolve(undefined) : child.once("exit", resolve)));
    rmSync(dir, { recursive: true, force: true });
  }
}

const result = await measure();
if (process.argv.includes("--json")) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  for (const { s, line } of result.lines) process.stdout.write(`${s.toFixed(2).padStart(7)} s  ${line.slice(0, 160)}\n`);
  process.stdout.write(
    result.servedMs === undefined
      ? `demo not served within ${LIMIT_MS / 1000} s\n`
      : `demo served ${(result.servedMs / 1000).toFixed(2)} s after npm start; server RSS ${result.rssMb.toFixed(0)} MB (peak ${result.peakRssMb.toFixed(0)} MB)\n`,
  );
}
if (result.servedMs === undefined) process.exitCode = 1;
