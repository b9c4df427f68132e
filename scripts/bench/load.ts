/**
 * Load side of the bench: child processes (the API server, the ceiling app), an RSS sampler
 * reading /proc/<pid>/status, and autocannon runs (warm-up, then the measured run).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import autocannon, { type RequestSpec, type Result } from "autocannon";

/** A free TCP port on 127.0.0.1 (asked from the OS, then released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export interface Child {
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `node --import tsx <script>` (node itself is the child, so its pid is the one whose
 * RSS counts) in `cwd` (default this one) and waits until `readyUrl` answers 200. Rejects if it exits or takes over 60 s.
 */
export async function startChild(
  script: string,
  env: Record<string, string>,
  readyUrl: string,
  nodeArgs: string[] = [],
  cwd?: string,
): Promise<Child> {
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, "--import", "tsx", script], {
    env: { ...process.env, ...env },
    ...(cwd ? { cwd } : {}),
    stdio: ["ignore", "ignore", "inherit"],
  });
  let exited: number | null = null;
  child.on("exit", (code) => {
    exited = code ?? -1;
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited !== null) throw new Error(`${script} exited with ${exited} before it was ready`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${script} not ready after 60 s`);
    }
    try {
      const response = await fetch(readyUrl);
      await response.arrayBuffer();
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    pid: child.pid!,
    async stop() {
      if (exited !== null) return;
      const done = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await done;
      clearTimeout(timer);
    },
  };
}

/** Samples VmRSS of a process every 200 ms; `maxMb` is the highest seen. */
export class RssSampler {
  maxMb = 0;
  lastMb = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number) {
    this.timer = setInterval(() => this.sample(), 200);
    this.sample();
  }

  private sample(): void {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.pid}/status`, "utf8"));
      if (!match) return;
      this.lastMb = Number(match[1]) / 1024;
      this.maxMb = Math.max(this.maxMb, this.lastMb);
    } catch {
      // the process is gone
    }
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
  }
}

const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) each live process of `pids` has used so far; exited ones are left out. */
export function cpuByPid(pids: number[]): Map<number, number> {
  const seconds = new Map<number, number>();
  for (const pid of pids) {
    try {
      // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      seconds.set(pid, (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND);
    } catch {
      // exited
    }
  }
  return seconds;
}

/**
 * CPU seconds the processes used between two readings of cpuByPid: each process of `after`, less
 * what it had in `before` (nothing when it started since, as a pooled database connection the
 * server opened during the run). A process of `before` that exited meanwhile counts nothing: in
 * the bench those are database connections the server's pool closed after 60 s idle, which spent
 * nothing in the run.
 */
export function cpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let seconds = 0;
  for (const [pid, spent] of after) seconds += spent - (before.get(pid) ?? 0);
  return seconds;
}

/** CPU seconds (user + system) the processes have used so far; processes gone count 0. */
export function cpuSeconds(pids: number[]): number {
  let total = 0;
  for (const spent of cpuByPid(pids).values()) total += spent;
  return total;
}

export interface LoadOptions {
  url: string;
  headers: Record<string, string>;
  /** Request sequence each connection loops over; default a plain GET of `url`. */
  requests?: RequestSpec[];
  connections: number;
  warmupSeconds: number;
  seconds: number;
  /** Processes whose CPU time per request is reported: the server, and the database backends. */
  cpu?: { server: number; database: () => Promise<number[]> };
}

export interface LoadResult {
  reqPerSec: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  statuses: Record<string, number>;
  /** CPU milliseconds per answered request in the server process and in its database backends. */
  serverCpuMs: number;
  dbCpuMs: number;
}

/** A warm-up run (discarded), then the measured run; req/s counts 2xx answers only. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const base = { url: options.url, headers: options.headers, connections: options.connections, timeout: 10 };
  const requests = options.requests ? { requests: options.requests } : {};
  if (options.warmupSeconds > 0) await autocannon({ ...base, ...requests, duration: options.warmupSeconds });
  const dbBefore = cpuByPid(options.cpu ? await options.cpu.database() : []);
  const serverBefore = options.cpu ? cpuSeconds([options.cpu.server]) : 0;
  const result: Result = await autocannon({ ...base, ...requests, duration: options.seconds });
  const serverAfter = options.cpu ? cpuSeconds([options.cpu.server]) : 0;
  const dbAfter = cpuByPid(options.cpu ? await options.cpu.database() : []);
  const answered = Math.max(1, result["2xx"] + result.non2xx);
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, stat]) => [code, stat.count]));
  return {
    reqPerSec: result["2xx"] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result["2xx"] + result.non2xx,
    non2xx: result.non2xx,
    errors: result.errors,
    statuses,
    serverCpuMs: ((serverAfter - serverBefore) * 1000) / answered,
    dbCpuMs: (cpuSpent(dbBefore, dbAfter) * 1000) / answered,
  };
}
