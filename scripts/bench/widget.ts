/**
 * The widget's first draw (docs/contract/clients-v3.md, "Quality bar", Speed: on the demo board
 * the first features are drawn within 300 ms of the element's connection, once the module is
 * cached). Starts a server of this tree serving the demo (its own database, `{BENCH_DB}_widget`,
 * created if missing; the demo is imported by the server's start), opens /demo once in Debian's
 * chromium to put `widget.js?v={version}` (immutable) in the context's HTTP cache, then opens it
 * `samples` times more in new pages of the same context. In each page an init script wraps the
 * element's connectedCallback: the time of the first connection, and a MutationObserver on its
 * shadow root the time the first `ul.list > li` (a feature) is in it. Without chromium the row
 * says "skipped: no chromium" and the rest of the bench runs.
 *
 * Resolves to the report's row: p50 = median and p99 = p95 of connection -> first feature (ms),
 * with the median from navigation start and the verdict against the goal in its note.
 */
import type { Sql } from "postgres";
import { CHROMIUM, chromiumInstalled, launchChromium } from "../chromium.ts";
import { freePort, startChild } from "./load.ts";
import type { Row } from "./report.ts";

export const WIDGET_FIRST_DRAW_ROUTE = "widget: first features drawn after connection on /demo, module cached (Chromium)";
/** The contract's bound, in ms; the row passes when the p95 is within it. */
export const WIDGET_FIRST_DRAW_GOAL_MS = 300;

/** Runs in every page before its scripts: records connection and first feature in `window.__fbBench`. */
const INSTRUMENT = `(() => {
  const define = CustomElementRegistry.prototype.define;
  CustomElementRegistry.prototype.define = function (name, ctor, options) {
    if (name === "feedback-board") {
      const connected = ctor.prototype.connectedCallback;
      ctor.prototype.connectedCallback = function () {
        if (!window.__fbBench) {
          const marks = (window.__fbBench = { connected: performance.now(), drawn: null });
          const root = this.shadowRoot;
          const observer = new MutationObserver(() => {
            if (marks.drawn === null && root.querySelector("ul.list > li")) {
              marks.drawn = performance.now();
              observer.disconnect();
            }
          });
          observer.observe(root, { childList: true, subtree: true });
        }
        return connected.call(this);
      };
    }
    return define.call(this, name, ctor, options);
  };
})();`;

export interface WidgetBenchOptions {
  /** A connection to the Postgres server (any database): creates the row's database. */
  admin: Sql;
  /** URL of the row's database (created if missing). */
  databaseUrl: string;
  databaseName: string;
  redisUrl: string;
  redisKeyPrefix: string;
  nodeArgs: string[];
  /** Measured page loads after the warming one. */
  samples: number;
  log: (line: string) => void;
}

/** The value at quantile `q` (0..1) of `values`, nearest rank. */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export async function benchWidgetFirstDraw(options: WidgetBenchOptions): Promise<Row> {
  const row = { route: WIDGET_FIRST_DRAW_ROUTE, project: "-" as const, reqPerSec: 0, bytes: 0, non2xx: 0, latencyOnly: true };
  if (!chromiumInstalled()) {
    options.log(`widget first draw: skipped, ${CHROMIUM} is not installed`);
    return { ...row, p50: 0, p99: 0, skipped: true, note: `skipped: no chromium (${CHROMIUM})` };
  }
  const [exists] = await options.admin`SELECT 1 FROM pg_database WHERE datname = ${options.databaseName}`;
  if (!exists) await options.admin.unsafe(`CREATE DATABASE ${options.databaseName}`);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const limit = "1000000000";
  options.log("widget first draw: starting a server with the demo ...");
  const server = await startChild(
    "src/server.ts",
    {
      NODE_ENV: "production",
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: options.redisUrl,
      REDIS_KEY_PREFIX: options.redisKeyPrefix,
      PORT: String(port),
      HOST: "127.0.0.1",
      DEMO: "auto",
      LOG_LEVEL: "warn",
      RATE_LIMIT_EMBED_READS_PER_MINUTE: limit,
      RATE_LIMIT_EMBED_WRITES_PER_MINUTE: limit,
    },
    `${base}/demo`,
    options.nodeArgs,
  );
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ viewport: { width: 900, height: 1000 } });
    await context.addInitScript(INSTRUMENT);
    const load = async () => {
      const page = await context.newPage();
      try {
        const response = await page.goto(`${base}/demo`, { waitUntil: "load" });
        if (response?.status() !== 200) throw new Error(`/demo answered ${response?.status()}`);
        await page.waitForFunction(() => (window as unknown as { __fbBench?: { drawn: number | null } }).__fbBench?.drawn != null, null, {
          timeout: 30_000,
        });
        const cached = await page.evaluate(() =>
          performance
            .getEntriesByType("resource")
            .some((entry) => entry.name.includes("/widget.js?v=") && (entry as PerformanceResourceTiming).transferSize === 0),
        );
        const marks = await page.evaluate(() => (window as unknown as { __fbBench: { connected: number; drawn: number } }).__fbBench);
        return { fromConnection: marks.drawn - marks.connected, fromNavigation: marks.drawn, cached };
      } finally {
        await page.close();
      }
    };
    options.log("widget first draw: warming the HTTP cache ...");
    await load();
    const runs: Awaited<ReturnType<typeof load>>[] = [];
    for (let i = 0; i < options.samples; i++) runs.push(await load());
    const uncached = runs.filter((run) => !run.cached).length;
    const fromConnection = runs.map((run) => run.fromConnection);
    const median = quantile(fromConnection, 0.5);
    const p95 = quantile(fromConnection, 0.95);
    const navigationMedian = quantile(
      runs.map((run) => run.fromNavigation),
      0.5,
    );
    const verdict = p95 <= WIDGET_FIRST_DRAW_GOAL_MS ? "met" : "NOT MET";
    options.log(`widget first draw: median ${median.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms (${verdict})`);
    return {
      ...row,
      p50: median,
      p99: p95,
      note:
        `(ms, ${runs.length} page loads: p50 column = median, p99 column = p95; goal p95 <= ${WIDGET_FIRST_DRAW_GOAL_MS} ms: ${verdict}; ` +
        `from navigation start median ${navigationMedian.toFixed(0)} ms; ` +
        (uncached === 0 ? "widget.js from the HTTP cache every time)" : `widget.js NOT from the cache ${uncached} times)`),
    };
  } finally {
    await browser.close();
    await server.stop();
  }
}
