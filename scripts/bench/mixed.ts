/**
 * The bench's mixed load (docs/benchmarks.md, "Targets", reads under writes): ten hot URLs of a
 * project read by autocannon while votes
 * and withdrawals from many voters arrive at a steady rate and the owner changes a feature's
 * status every 2 s. One row per write rate, each with the reads' throughput and latency, the
 * shared read cache's hit ratio and page builds per write (counts the server writes on SIGUSR2
 * when started with BENCH_READ_STATS), and CPU per read (server + Postgres backends, the
 * writes' cost included). A last row splits the same load over two server processes and counts
 * page builds across both.
 *
 * A/B in one run: with `baseline` (a second checkout of the server, e.g. the commit before a
 * change) every row is measured on the baseline server and on this tree's server back to back,
 * and the table shows both with the ratio B/A.
 */

import { readFileSync } from "node:fs";
import type { RequestSpec } from "autocannon";
import autocannon from "autocannon";
import type { Fixtures } from "./fixtures.ts";
import { cpuByPid, cpuSeconds, cpuSpent } from "./load.ts";

/** One API server process the section may address. */
export interface MixedServer {
  label: string;
  base: string;
  pid: number;
  /** The file the server writes its read-cache counts to on SIGUSR2 (BENCH_READ_STATS). */
  statsFile: string;
}

export interface MixedTarget {
  project: "small" | "large";
  fx: Fixtures;
  headers: Record<string, string>;
}

export interface MixedOptions {
  targets: MixedTarget[];
  /** The servers to compare, each an instance of its own (A = baseline first when given). */
  variants: { name: string; primary: MixedServer; startSecond: () => Promise<MixedServer & { stop(): Promise<void> }> }[];
  databasePids: () => Promise<number[]>;
  connections: number;
  seconds: number;
  warmupSeconds: number;
  /** Write rates (writes/s) of the single-instance rows. */
  rates: number[];
  /** Write rate of the two-instance row. */
  twoInstanceRate: number;
  log: (line: string) => void;
  /** Run after each project's rows (VACUUM of the voted tables). */
  afterProject: () => Promise<void>;
}

export interface MixedRow {
  variant: string;
  project: string;
  setup: string;
  targetRate: number;
  writesPerSec: number;
  writeErrors: number;
  readsPerSec: number;
  p50: number;
  p99: number;
  readErrors: number;
  hitRatio: number | null;
  buildsPerWrite: number | null;
  builds: number;
  /** Of the FeatureObjects on the listing pages built, the share taken from kept ones (null: none built, or a server that does not count them). */
  objectsKept: number | null;
  serverCpuMsPerRead: number;
  dbCpuMsPerRead: number;
}

/** The ten hot URLs: listings in three orders and by tag, the board, four details, comments. */
export function hotPaths(fx: Fixtures): string[] {
  const p = `/api/v3/projects/${fx.slug}`;
  return [
    `${p}/features?sort=top`,
    `${p}/features?sort=trending`,
    `${p}/features?sort=new`,
    `${p}/features?tag=${fx.tagId}&sort=top`,
    p,
    ...fx.hotFeatureIds.slice(0, 4).map((id) => `${p}/features/${id}`),
    `${p}/features/${fx.commentedFeatureIds[0]}/comments`,
  ];
}

/** The shared read cache's counts (AppCaches.readStats); the objects' counts are absent on servers older than them. */
interface ReadStats {
  hits: number;
  builds: number;
  objectsKept?: number;
  objectsWritten?: number;
}

async function readStats(server: MixedServer): Promise<ReadStats> {
  let before = 0;
  try {
    before = (JSON.parse(readFileSync(server.statsFile, "utf8")) as { asked: number }).asked;
  } catch {
    // not written yet
  }
  process.kill(server.pid, "SIGUSR2");
  for (let i = 0; i < 100; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    try {
      const stats = JSON.parse(readFileSync(server.statsFile, "utf8")) as ReadStats & { asked: number };
      if (stats.asked > before) return stats;
    } catch {
      // being written
    }
  }
  throw new Error(`${server.label}: no read-cache counts in ${server.statsFile} (started without BENCH_READ_STATS?)`);
}

/**
 * Votes and withdrawals at `rate` writes/s (each pair's withdrawal only after its vote was
 * answered, so none is refused for a race), spread over `servers` in turn, and an owner status
 * PATCH every 2 s. Resolves, once stopped and drained, to the writes answered 2xx and the rest.
 */
function startWrites(servers: MixedServer[], target: MixedTarget, rate: number): { stop: () => Promise<{ ok: number; failed: number }> } {
  const free = [...target.fx.votePairs];
  const cast: { token: string; featureId: number }[] = [];
  const inFlight = new Set<Promise<void>>();
  let ok = 0;
  let failed = 0;
  let sent = 0;
  let running = true;
  const started = performance.now();
  const send = (path: string, init: RequestInit, after?: () => void) => {
    const server = servers[sent++ % servers.length]!;
    const request = fetch(`${server.base}${path}`, init)
      .then(async (response) => {
        await response.arrayBuffer();
        if (response.ok) {
          ok++;
          after?.();
        } else failed++;
      })
      .catch(() => {
        failed++;
      })
      .finally(() => inFlight.delete(request));
    inFlight.add(request);
  };
  const votePath = (featureId: number) => `/api/v3/projects/${target.fx.slug}/features/${featureId}/vote`;
  let votes = 0;
  const voteTimer =
    rate > 0
      ? setInterval(() => {
          const due = Math.floor(((performance.now() - started) / 1000) * rate);
          while (running && votes < due) {
            votes++;
            // Withdraw the oldest answered vote every other write, else vote with a free pair.
            const withdraw = votes % 2 === 0 && cast.length > 0;
            const pair = withdraw ? cast.shift()! : free.shift();
            if (!pair) continue;
            const headers = { ...target.headers, "X-VF-Anon": pair.token };
            if (withdraw) send(votePath(pair.featureId), { method: "DELETE", headers }, () => free.push(pair));
            else send(votePath(pair.featureId), { method: "POST", headers }, () => cast.push(pair));
          }
        }, 5)
      : undefined;
  let patches = 0;
  const ownerPatch = () => {
    const hot = target.fx.hotFeatureIds;
    const featureId = hot[patches % 10]!;
    const status = Math.floor(patches / 10) % 2 === 0 ? "in_progress" : "planned";
    patches++;
    send(`/api/v3/projects/${target.fx.slug}/admin/features/${featureId}`, {
      method: "PATCH",
      headers: { ...target.headers, "Content-Type": "application/json" },
      body: JSON.stringify({ status }),
    });
  };
  const ownerTimer = rate > 0 ? setInterval(ownerPatch, 2000) : undefined;
  return {
    async stop() {
      running = false;
      clearInterval(voteTimer);
      clearInterval(ownerTimer);
      while (inFlight.size > 0) await Promise.all([...inFlight]);
      // Leave the project as found: withdraw the votes still standing.
      for (const pair of cast.splice(0)) {
        const response = await fetch(`${servers[0]!.base}${votePath(pair.featureId)}`, {
          method: "DELETE",
          headers: { ...target.headers, "X-VF-Anon": pair.token },
        });
        await response.arrayBuffer();
      }
      return { ok, failed };
    },
  };
}

/** A request sequence rotating over `paths` across all connections. */
function rotating(paths: string[]): RequestSpec[] {
  let next = 0;
  return [{ method: "GET", setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length]! }) }];
}

/** One row: reads over `servers` (connections split evenly) while writes run at `rate`. */
async function measureRow(
  options: MixedOptions,
  variant: string,
  servers: MixedServer[],
  target: MixedTarget,
  rate: number,
): Promise<MixedRow> {
  const paths = hotPaths(target.fx);
  const perServer = Math.max(1, Math.floor(options.connections / servers.length));
  const reads = (duration: number) =>
    Promise.all(
      servers.map((server) =>
        autocannon({
          url: `${server.base}${paths[0]}`,
          headers: target.headers,
          connections: perServer,
          timeout: 10,
          duration,
          requests: rotating(paths),
        }),
      ),
    );
  if (options.warmupSeconds > 0) await reads(options.warmupSeconds);
  const dbBefore = cpuByPid(await options.databasePids());
  const before = await Promise.all(servers.map(readStats));
  const cpuBefore = cpuSeconds(servers.map((s) => s.pid));
  const writes = startWrites(servers, target, rate);
  const results = await reads(options.seconds);
  const cpuAfter = cpuSeconds(servers.map((s) => s.pid));
  const dbAfter = cpuByPid(await options.databasePids());
  const written = await writes.stop();
  const after = await Promise.all(servers.map(readStats));
  // What every server counted over the run; NaN when one does not report the count (shown as -).
  const counted = (pick: (s: ReadStats) => number | undefined) =>
    after.reduce((sum, s, i) => sum + (pick(s) ?? Number.NaN) - (pick(before[i]!) ?? Number.NaN), 0);
  const hits = counted((s) => s.hits);
  const builds = counted((s) => s.builds);
  const objectsKept = counted((s) => s.objectsKept);
  const objectsBuilt = objectsKept + counted((s) => s.objectsWritten);
  const answered = results.reduce((sum, r) => sum + r["2xx"], 0);
  const duration = results[0]!.duration;
  const weighted = (pick: (r: (typeof results)[number]) => number) =>
    results.reduce((sum, r) => sum + pick(r) * r["2xx"], 0) / Math.max(1, answered);
  return {
    variant,
    project: target.project,
    setup: servers.length === 1 ? "1 instance" : `${servers.length} instances`,
    targetRate: rate,
    writesPerSec: written.ok / duration,
    writeErrors: written.failed,
    readsPerSec: answered / duration,
    p50: weighted((r) => r.latency.p50),
    // The worse instance's p99 (a conservative merge of two histograms).
    p99: Math.max(...results.map((r) => r.latency.p99)),
    readErrors: results.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
    hitRatio: hits + builds > 0 ? hits / (hits + builds) : null,
    buildsPerWrite: written.ok > 0 ? builds / written.ok : null,
    builds,
    objectsKept: objectsBuilt > 0 ? objectsKept / objectsBuilt : null,
    serverCpuMsPerRead: ((cpuAfter - cpuBefore) * 1000) / Math.max(1, answered),
    dbCpuMsPerRead: (cpuSpent(dbBefore, dbAfter) * 1000) / Math.max(1, answered),
  };
}

const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The section's table; with two variants, each B row carries its ratio to the A row. */
export function renderMixed(rows: MixedRow[]): string {
  const lines = [
    "| variant | project | set-up | writes/s (target) | reads/s | B/A reads | p50 ms | p99 ms | hit ratio | builds/write | objects kept | CPU ms/read server + db |",
    "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
  ];
  const variants = [...new Set(rows.map((row) => row.variant))];
  const same = (r: MixedRow, row: MixedRow) => r.project === row.project && r.setup === row.setup && r.targetRate === row.targetRate;
  for (const row of rows) {
    // A rate measured twice pairs the n-th B row with the n-th A row.
    const occurrence = rows.filter((r) => r.variant === row.variant && same(r, row)).indexOf(row);
    const a = rows.filter((r) => r.variant === variants[0] && same(r, row))[occurrence];
    const ratio = row.variant !== variants[0] && a && a.readsPerSec > 0 ? `${fmt(row.readsPerSec / a.readsPerSec, 2)}x` : "";
    const errors = row.readErrors + row.writeErrors > 0 ? ` (${row.readErrors} read, ${row.writeErrors} write errors)` : "";
    lines.push(
      `| ${row.variant} | ${row.project} | ${row.setup} | ${fmt(row.writesPerSec, 1)} (${row.targetRate}) | ${fmt(row.readsPerSec)}${errors} | ${ratio} | ` +
        `${fmt(row.p50, 1)} | ${fmt(row.p99, 1)} | ${row.hitRatio === null ? "-" : `${fmt(100 * row.hitRatio, 1)} %`} | ` +
        `${row.buildsPerWrite === null ? "-" : fmt(row.buildsPerWrite, 2)} | ${row.objectsKept === null ? "-" : `${fmt(100 * row.objectsKept, 1)} %`} | ` +
        `${fmt(row.serverCpuMsPerRead, 3)} + ${fmt(row.dbCpuMsPerRead, 3)} |`,
    );
  }
  return lines.join("\n");
}

/**
 * Runs the section: for each project, each rate on every variant back to back (so A and B are
 * seconds apart on this shared machine; the order alternates), then the two-instance row per
 * variant. A rate listed twice is measured twice. Returns the
 * rows (rendered by renderMixed).
 */
export async function runMixedSection(options: MixedOptions): Promise<MixedRow[]> {
  const rows: MixedRow[] = [];
  let turn = 0;
  // A B, then B A, ...: neither variant always runs first (this VM's speed drifts within a run).
  const inTurn = () => (turn++ % 2 === 0 ? options.variants : [...options.variants].reverse());
  for (const target of options.targets) {
    for (const rate of options.rates) {
      for (const variant of inTurn()) {
        options.log(`${target.project}: mixed load, ${variant.name}, ${rate} writes/s ...`);
        rows.push(await measureRow(options, variant.name, [variant.primary], target, rate));
      }
    }
    for (const variant of inTurn()) {
      options.log(`${target.project}: mixed load, ${variant.name}, two instances, ${options.twoInstanceRate} writes/s ...`);
      const second = await variant.startSecond();
      try {
        rows.push(await measureRow(options, variant.name, [variant.primary, second], target, options.twoInstanceRate));
      } finally {
        await second.stop();
      }
    }
    await options.afterProject();
  }
  return rows;
}

/** A started API server the section can stop. */
export type StartedServer = MixedServer & { stop(): Promise<void> };

/**
 * The section as `npm run bench` runs it: `primary` is this tree's server; with `baselineDir`
 * (BENCH_BASELINE_DIR, a checkout of the commit to compare against, node_modules linked) a
 * baseline server is started from there with a Redis prefix of its own, and every row is
 * measured on both. `startApi(cwd, prefix)` starts one more server. Resolves to the markdown.
 */
export async function mixedLoadSection(
  setup: Omit<MixedOptions, "variants"> & {
    primary: MixedServer;
    startApi: (cwd: string | undefined, prefix: string) => Promise<StartedServer>;
    redisPrefix: string;
    baselineDir?: string | undefined;
  },
): Promise<string> {
  const variants: MixedOptions["variants"] = [];
  let baseline: StartedServer | undefined;
  if (setup.baselineDir) {
    const prefix = `${setup.redisPrefix}baseline:`;
    baseline = await setup.startApi(setup.baselineDir, prefix);
    variants.push({ name: "A: baseline", primary: baseline, startSecond: () => setup.startApi(setup.baselineDir, prefix) });
  }
  variants.push({
    name: setup.baselineDir ? "B: this tree" : "this tree",
    primary: setup.primary,
    startSecond: () => setup.startApi(undefined, setup.redisPrefix),
  });
  try {
    const rows = await runMixedSection({ ...setup, variants });
    return [
      "### Mixed load",
      "",
      `Ten hot URLs (hotPaths in scripts/bench/mixed.ts) read by ${setup.connections} connections for ${setup.seconds} s while votes and`,
      "withdrawals of many voters arrive at the rate shown and the owner changes a feature's status every 2 s.",
      "hit ratio and builds/write: the shared read cache's answers served from an entry vs. built (all instances);",
      "objects kept: of the FeatureObjects on the listing pages built, the share taken from the last build (features.object-cache.ts);",
      "CPU ms/read: server process(es) and Postgres backends over the run, writes included, per read answered.",
      ...(setup.baselineDir ? [`A: the server in ${setup.baselineDir}; B: this tree; rows of a rate measured back to back.`] : []),
      "",
      renderMixed(rows),
    ].join("\n");
  } finally {
    await baseline?.stop();
  }
}
