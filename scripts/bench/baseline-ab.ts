/**
 * A/B of one load in one bench run: the same load against two server processes on the same
 * database, one started from a baseline source tree (BENCH_BASELINE_DIR: e.g. an extract of the
 * commit before a change, `git archive <commit> | tar -x -C <dir>`, with a `node_modules` link)
 * and one from this tree, in alternating rounds (A B A B ...) so the machine's drift hits both
 * alike. Used for the vote cycle (the cycle with auto-subscription within 10 % of the one without),
 * the owner PATCH, the uncached similar-features reads and the uncached page builds (the CPU
 * of a page build): docs/benchmarks.md, "Targets".
 */
import { resolve } from "node:path";
import type { RequestSpec } from "autocannon";
import { type Child, freePort, type LoadResult, runLoad, startChild } from "./load.ts";

export interface AbOptions {
  /** Route label in the report. */
  route: string;
  /** What one answered request is, in the log and the report: "writes/s" (default) or "req/s". */
  unit?: string;
  /** Root of the baseline source tree (holds src/server.ts and node_modules). */
  baselineDir: string;
  /** The server environment (PORT is set per server). */
  env: Record<string, string>;
  nodeArgs: string[];
  headers: Record<string, string>;
  /**
   * A fresh request sequence for one run (it may keep state across the run), given the side and
   * the measured run's index (-1 for the warm-up): read rows hand each run texts never asked
   * before on that side, and the same texts to both sides.
   */
  requests: (side: "baseline" | "current", run: number) => RequestSpec[];
  connections: number;
  warmupSeconds: number;
  seconds: number;
  /** Rounds per side, alternating baseline and current. */
  rounds: number;
  /** Pids of the database backends serving the bench database (their CPU counts per request). */
  databasePids: () => Promise<number[]>;
  /**
   * Brings the database back to the same starting state before each measured run (withdraws
   * what the run left, removes what only one side writes), so neither side runs on the
   * other's leftovers.
   */
  reset: (base: string) => Promise<void>;
}

export interface AbSide {
  runs: LoadResult[];
  reqPerSec: number;
  p99: number;
  /** CPU milliseconds per answered request, server process + database backends (mean of runs). */
  cpuMs: number;
  /** The server process's and the database backends' parts of cpuMs. */
  serverCpuMs: number;
  dbCpuMs: number;
}

export interface AbResult {
  baseline: AbSide;
  current: AbSide;
  /** Current writes/s over baseline writes/s, minus 1 (negative: slower). */
  throughputChange: number;
  /** Current mean p99 over baseline mean p99, minus 1 (positive: slower). */
  p99Change: number;
  /** Current CPU per request over baseline's, minus 1 (positive: costlier). */
  cpuChange: number;
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

function side(runs: LoadResult[]): AbSide {
  return {
    runs,
    reqPerSec: mean(runs.map((run) => run.reqPerSec)),
    p99: mean(runs.map((run) => run.p99)),
    cpuMs: mean(runs.map((run) => run.serverCpuMs + run.dbCpuMs)),
    serverCpuMs: mean(runs.map((run) => run.serverCpuMs)),
    dbCpuMs: mean(runs.map((run) => run.dbCpuMs)),
  };
}

async function startServer(script: string, options: AbOptions): Promise<{ child: Child; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = await startChild(script, { ...options.env, PORT: String(port) }, `${base}/api/v3/health`, options.nodeArgs);
  return { child, base };
}

/**
 * Starts the baseline and the current server, warms each up, then runs `rounds` measured runs
 * on each in alternation, each after `reset`. Throws when either server does not start. Both
 * servers are stopped before it returns.
 */
export async function runBaselineAb(options: AbOptions, log: (line: string) => void): Promise<AbResult> {
  const baseline = await startServer(resolve(options.baselineDir, "src/server.ts"), options);
  let current: { child: Child; base: string } | undefined;
  try {
    current = await startServer("src/server.ts", options);
    const sides = [
      { name: "baseline" as const, server: baseline, runs: [] as LoadResult[] },
      { name: "current" as const, server: current, runs: [] as LoadResult[] },
    ];
    const load = (
      name: "baseline" | "current",
      run: number,
      base: string,
      seconds: number,
      cpu?: { server: number; database: () => Promise<number[]> },
    ) =>
      runLoad({
        url: `${base}/api/v3/health`,
        headers: options.headers,
        connections: options.connections,
        requests: options.requests(name, run),
        warmupSeconds: 0,
        seconds,
        ...(cpu ? { cpu } : {}),
      });
    for (const { name, server } of sides) {
      log(`  A/B ${options.route}: warming up ${name}`);
      await options.reset(server.base);
      await load(name, -1, server.base, options.warmupSeconds);
    }
    for (let round = 0; round < options.rounds; round++) {
      for (const entry of sides) {
        await options.reset(entry.server.base);
        const result = await load(entry.name, round, entry.server.base, options.seconds, {
          server: entry.server.child.pid,
          database: options.databasePids,
        });
        if (result.non2xx > 0 || result.errors > 0)
          log(`  non-2xx ${result.non2xx}, errors ${result.errors}: ${JSON.stringify(result.statuses)}`);
        log(
          `  A/B ${options.route}: ${entry.name} round ${round + 1}: ${Math.round(result.reqPerSec)} ${options.unit ?? "writes/s"}, p99 ${result.p99} ms, ` +
            `CPU ${result.serverCpuMs.toFixed(2)} + ${result.dbCpuMs.toFixed(2)} ms/request (server + db)`,
        );
        entry.runs.push(result);
      }
    }
    await options.reset(current.base);
    const a = side(sides[0]!.runs);
    const b = side(sides[1]!.runs);
    return {
      baseline: a,
      current: b,
      throughputChange: b.reqPerSec / a.reqPerSec - 1,
      p99Change: b.p99 / a.p99 - 1,
      cpuChange: b.cpuMs / a.cpuMs - 1,
    };
  } finally {
    await current?.child.stop();
    await baseline.child.stop();
  }
}

/**
 * The report line of an A/B: figures of both sides, and each change (writes/s, p99, CPU per
 * request) marked within or outside `limit` (a fraction: 0.1 = 10 %).
 */
export function describeAb(route: string, result: AbResult, limit = 0.1, unit = "writes/s"): string {
  const verdict = (value: number, worse: boolean) =>
    `${value >= 0 ? "+" : ""}${(100 * value).toFixed(1)} % (${worse ? "OUTSIDE" : "within"} ${Math.round(limit * 100)} %)`;
  const figures = (s: AbSide) =>
    `${Math.round(s.reqPerSec).toLocaleString("en-US")} ${unit}, p99 ${s.p99.toFixed(1)} ms, ${s.cpuMs.toFixed(2)} ms CPU/request ` +
    `(server ${s.serverCpuMs.toFixed(2)} + db ${s.dbCpuMs.toFixed(2)}; ` +
    `runs: ${s.runs.map((run) => `${Math.round(run.reqPerSec)}/${run.p99}/${(run.serverCpuMs + run.dbCpuMs).toFixed(2)}`).join(", ")} ${unit} / p99 ms / CPU ms)`;
  return (
    `A/B ${route}, ${result.baseline.runs.length} alternating rounds per side: baseline ${figures(result.baseline)}; ` +
    `this tree ${figures(result.current)}; ${unit} ${verdict(result.throughputChange, result.throughputChange < -limit)}, ` +
    `p99 ${verdict(result.p99Change, result.p99Change > limit)}, CPU per request ${verdict(result.cpuChange, result.cpuChange > limit)}`
  );
}
