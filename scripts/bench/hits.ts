/**
 * The bench's cached-hits section (docs/benchmarks.md, "Targets", cached hits;
 * `npm run bench -- --only=hits`): server CPU
 * per cached public read against the reference row (bare Hono + the rate limiter's Redis round
 * trip, scripts/bench/ceiling.ts with REDIS_URL), in one run. The reference app, a server from
 * BENCH_BASELINE_DIR when given, and a server from this tree, all on the bench database, are
 * measured in alternating rounds (reference, baseline, this tree, for each route in turn) so the
 * shared machine's drift hits all of them alike. Each side's figure is the mean over the rounds
 * of server CPU ms per answered request (utime + stime of the server process over the run);
 * the ratio is that over the reference's mean.
 *
 * Reads are anonymous GETs with the secret key, answered from the shared read cache after the
 * first request (nothing writes meanwhile). The reference answers a fixed body of `bodyBytes`
 * (the size of a features page), as the ceiling row does.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Fixtures } from "./fixtures.ts";
import { type Child, freePort, type LoadResult, runLoad, startChild } from "./load.ts";

/** An API server process started for the section. */
export interface HitServer {
  base: string;
  pid: number;
  stop(): Promise<void>;
}

export interface HitsOptions {
  fx: Fixtures;
  headers: Record<string, string>;
  /** Starts an API server from `cwd` (undefined: this tree). */
  startApi: (cwd: string | undefined) => Promise<HitServer>;
  baselineDir?: string | undefined;
  redisUrl: string;
  /** Body size of the reference app's answer. */
  bodyBytes: number;
  rounds: number;
  seconds: number;
  connections: number;
  log: (line: string) => void;
}

export interface HitRoute {
  route: string;
  path: string;
}

/** The cached reads measured: the board document, a features page, a feature's detail, its comments. */
export function hitRoutes(fx: Fixtures): HitRoute[] {
  const p = `/api/v3/projects/${fx.slug}`;
  return [
    { route: "GET projects/{slug} (board)", path: p },
    { route: "GET features?sort=top", path: `${p}/features?sort=top` },
    { route: "GET features/{id}", path: `${p}/features/${fx.hotFeatureIds[0]}` },
    { route: "GET features/{id}/comments", path: `${p}/features/${fx.commentedFeatureIds[0]}/comments` },
  ];
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** Runs the section and returns its markdown (a heading, how it was measured, one table). */
export async function hitsSection(options: HitsOptions): Promise<string> {
  const { fx, headers, connections, seconds, rounds, log } = options;
  const routes = hitRoutes(fx);
  const refPort = await freePort();
  const reference: Child = await startChild(
    "scripts/bench/ceiling.ts",
    {
      PORT: String(refPort),
      BODY_BYTES: String(options.bodyBytes),
      REDIS_URL: options.redisUrl,
      REDIS_KEY_PREFIX: `fbbenchhits:${randomBytes(4).toString("hex")}:`,
    },
    `http://127.0.0.1:${refPort}/`,
  );
  const refUrl = `http://127.0.0.1:${refPort}/`;
  const sides: { name: string; server: HitServer }[] = [];
  const loads: string[] = [];
  try {
    if (options.baselineDir) sides.push({ name: "baseline", server: await options.startApi(options.baselineDir) });
    sides.push({ name: "this tree", server: await options.startApi(undefined) });
    const none = async () => [];
    const results = new Map<string, LoadResult[]>();
    const push = (key: string, result: LoadResult) => results.set(key, [...(results.get(key) ?? []), result]);
    // Warm-up: JIT, connections, and each route's cache entry.
    for (const { server } of sides)
      for (const r of routes) await runLoad({ url: `${server.base}${r.path}`, headers, connections, warmupSeconds: 0, seconds: 1 });
    await runLoad({ url: refUrl, headers: {}, connections, warmupSeconds: 0, seconds: 1 });
    for (let round = 0; round < rounds; round++) {
      for (const r of routes) {
        const cpu = { server: reference.pid, database: none };
        push("reference", await runLoad({ url: refUrl, headers: {}, connections, warmupSeconds: 0, seconds, cpu }));
        for (const { name, server } of sides) {
          const result = await runLoad({
            url: `${server.base}${r.path}`,
            headers,
            connections,
            warmupSeconds: 0,
            seconds,
            cpu: { server: server.pid, database: none },
          });
          if (result.non2xx > 0 || result.errors > 0) log(`  hits: ${name} ${r.route}: non-2xx ${result.non2xx}, errors ${result.errors}`);
          push(`${name}\t${r.route}`, result);
        }
      }
      const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
      loads.push(load);
      log(`  hits: round ${round + 1} of ${rounds} done, load average ${load}`);
    }
    const refRuns = results.get("reference")!;
    const ref = mean(refRuns.map((x) => x.serverCpuMs));
    const cell = (runs: LoadResult[]) => {
      const cpu = mean(runs.map((x) => x.serverCpuMs));
      return `${cpu.toFixed(3)} (${(cpu / ref).toFixed(2)}x), ${Math.round(mean(runs.map((x) => x.reqPerSec))).toLocaleString("en-US")}/s`;
    };
    const names = sides.map((s) => s.name);
    const lines = [
      "### Cached hits",
      "",
      `Server CPU ms per request (ratio to the reference), req/s; ${connections} connections, ${rounds} alternating rounds of ${seconds} s`,
      `(reference${options.baselineDir ? `, baseline (${options.baselineDir})` : ""}, this tree, route by route); load average after each round: ${loads.join("; ")}.`,
      `Reference: bare Hono + the rate limiter's Redis round trip, ${options.bodyBytes} bytes: ${ref.toFixed(3)} ms, ${Math.round(mean(refRuns.map((x) => x.reqPerSec))).toLocaleString("en-US")}/s`,
      `(rounds: ${refRuns.map((x) => x.serverCpuMs.toFixed(3)).join(", ")}).`,
      "",
      `| route | ${names.join(" | ")} |`,
      `|---|${names.map(() => "--:").join("|")}|`,
      ...routes.map((r) => `| ${r.route} | ${sides.map((s) => cell(results.get(`${s.name}\t${r.route}`)!)).join(" | ")} |`),
    ];
    return lines.join("\n");
  } finally {
    for (const { server } of sides) await server.stop();
    await reference.stop();
  }
}
