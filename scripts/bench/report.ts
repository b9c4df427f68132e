/**
 * The bench's output: one markdown table (route, project, req/s, p50, p99, bytes, ratio to the
 * ceiling, large/small ratio) plus the run's facts, printed and written into docs/benchmarks.md between
 * `<!-- bench:start -->` and `<!-- bench:end -->` (a "## Benchmarks" section is appended when
 * the markers are missing; nothing else in the file is touched).
 */
import { readFileSync, writeFileSync } from "node:fs";

export interface Row {
  route: string;
  project: "small" | "large" | "-";
  reqPerSec: number;
  p50: number;
  p99: number;
  bytes: number;
  non2xx: number;
  serverCpuMs?: number;
  dbCpuMs?: number;
  note?: string;
  /** A row of times alone (no load): req/s and the ratio to the ceiling are not drawn. */
  latencyOnly?: boolean;
  /** Not measured (the note says why): no figure is drawn. */
  skipped?: boolean;
}

export interface RunFacts {
  date: string;
  nproc: number;
  cpu: string;
  connections: number;
  seconds: number;
  warmupSeconds: number;
  ceilingReqPerSec: number;
  /** How the ceiling figure was taken (e.g. the runs it averages). */
  ceilingNote?: string;
  maxRssMb: number;
  generation: string[];
  checks: string[];
}

const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The table as markdown; ratios are req/s over the ceiling's and large req/s over small's. */
export function renderTable(rows: Row[], ceiling: number): string {
  const lines = [
    "| route | project | req/s | p50 ms | p99 ms | bytes | vs ceiling | large/small | CPU ms/req server + db |",
    "|---|---|--:|--:|--:|--:|--:|--:|--:|",
  ];
  for (const row of rows) {
    const small = rows.find((r) => r.route === row.route && r.project === "small");
    const ratio = row.project === "large" && small && small.reqPerSec > 0 ? fmt(row.reqPerSec / small.reqPerSec, 2) : "";
    const errors = row.non2xx > 0 ? ` (${fmt(row.non2xx)} non-2xx)` : "";
    const rate = row.latencyOnly || row.skipped ? "-" : `${fmt(row.reqPerSec)}${errors}`;
    const ms = (value: number) => (row.skipped ? "-" : fmt(value, 1));
    const share = row.latencyOnly || row.skipped ? "-" : ceiling > 0 ? `${fmt((100 * row.reqPerSec) / ceiling)} %` : "";
    lines.push(
      `| ${row.route}${row.note ? ` ${row.note}` : ""} | ${row.project} | ${rate} | ${ms(row.p50)} | ` +
        `${ms(row.p99)} | ${fmt(row.bytes)} | ${share} | ${ratio} | ` +
        `${row.serverCpuMs === undefined ? "" : `${fmt(row.serverCpuMs, 2)} + ${fmt(row.dbCpuMs ?? 0, 2)}`} |`,
    );
  }
  return lines.join("\n");
}

/** Table plus facts, as printed and as stored in docs/benchmarks.md. */
export function renderReport(rows: Row[], facts: RunFacts): string {
  return [
    `Last run: ${facts.date}, \`nproc\` = ${facts.nproc} (${facts.cpu}); the server (production mode, child process),`,
    "Postgres, Redis and the load generator share the machine.",
    `Load: autocannon, ${facts.connections} connections, ${facts.seconds} s per route after a ${facts.warmupSeconds} s warm-up, every`,
    "middleware on (API key, rate limiter on Redis, voter identity, ETag).",
    "",
    renderTable(rows, facts.ceilingReqPerSec),
    "",
    `- ceiling: bare Hono on @hono/node-server, fixed body of the features-list size: ${fmt(facts.ceilingReqPerSec)} req/s` +
      (facts.ceilingNote ? ` (${facts.ceilingNote})` : ""),
    `- server RSS (VmRSS, sampled every 200 ms): max ${fmt(facts.maxRssMb)} MB`,
    ...facts.generation.map((line) => `- ${line}`),
    ...facts.checks.map((line) => `- ${line}`),
    "- large/small: large-project req/s divided by small-project req/s on the same route (1.00 = no slowdown at scale).",
    "- CPU ms/req: CPU time (user + system, /proc/<pid>/stat) of the server process and of its Postgres backends over the",
    "  measured run, per answered request; unlike req/s it does not depend on what else the machine is doing.",
  ].join("\n");
}

const START = "<!-- bench:start -->";
const END = "<!-- bench:end -->";

/** Replaces the text between the bench markers in `path` (appending the section if absent). */
export function writeReadme(path: string, report: string): void {
  const readme = readFileSync(path, "utf8");
  const block = `${START}\n${report}\n${END}`;
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  const next =
    start !== -1 && end > start
      ? readme.slice(0, start) + block + readme.slice(end + END.length)
      : `${readme.replace(/\n*$/, "\n")}\n## Benchmarks\n\n\`npm run bench\` generates the two projects below in a database \`fb_bench\` (dropped and recreated;\n\`--reuse\` keeps it), starts the server in production mode against Postgres and Redis and measures\nit (\`--quick\`: small project only, 3 s per route; flags and environment in \`scripts/bench.ts\`).\n\n${block}\n`;
  writeFileSync(path, next);
}
