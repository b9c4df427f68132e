/**
 * A/B of cached public reads against the reference row in one run: the reference app (bare Hono
 * + the rate limiter's Redis round trip, scripts/bench/ceiling.ts), a server started from a
 * baseline source tree (BENCH_BASELINE_DIR) and one from this tree, all on the bench database,
 * measured in alternating rounds (R A B R A B ...) so the shared machine's drift hits all alike.
 * Prints server CPU ms per request and each side's ratio to the reference.
 *
 * `BENCH_BASELINE_DIR=<dir> node --import tsx scripts/bench/hit-ab.ts` after `npm run bench -- --quick`
 * generated the small project. Env: BENCH_PG, BENCH_DB, BENCH_REDIS as scripts/bench.ts;
 * BENCH_AB_ROUNDS (default 3), BENCH_AB_SECONDS (default 3).
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import postgres from "postgres";
import { benchKeys, SMALL } from "./dataset.ts";
import { loadFixtures } from "./fixtures.ts";
import { type Child, freePort, type LoadResult, runLoad, startChild } from "./load.ts";

const pgServer = process.env.BENCH_PG ?? "postgres://postgres@127.0.0.1:5432";
const dbName = process.env.BENCH_DB ?? "fb_bench";
const redisUrl = process.env.BENCH_REDIS ?? "redis://127.0.0.1:6379";
const baselineDir = process.env.BENCH_BASELINE_DIR;
const rounds = Number(process.env.BENCH_AB_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_AB_SECONDS ?? 3);
const connections = 32;
const databaseUrl = Object.assign(new URL(pgServer), { pathname: `/${dbName}` }).toString();
const limit = "1000000000";

function serverNodeArgs(): string[] {
  const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { config?: { server_node_args?: string } };
  return (pkg.config?.server_node_args ?? "").split(" ").filter(Boolean);
}

async function startApi(script: string): Promise<{ child: Child; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    NODE_ENV: "production",
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `fbhitab:${randomBytes(4).toString("hex")}:`,
    PORT: String(port),
    HOST: "127.0.0.1",
    DEMO: "off",
    LOG_LEVEL: "warn",
    RATE_LIMIT_READS_PER_MINUTE: limit,
    RATE_LIMIT_WRITES_PER_MINUTE: limit,
    RATE_LIMIT_EMBED_READS_PER_MINUTE: limit,
    RATE_LIMIT_EMBED_WRITES_PER_MINUTE: limit,
  };
  const child = await startChild(script, env, `${base}/api/v3/health`, serverNodeArgs());
  return { child, base };
}

async function main(): Promise<void> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const fx = await loadFixtures(sql, SMALL);
  await sql.end();
  const headers = { "X-API-Key": benchKeys(fx.slug).secret };
  const p = `/api/v3/projects/${fx.slug}`;
  const routes = [
    { route: "GET projects/{slug} (board)", path: p },
    { route: "GET features?sort=top", path: `${p}/features?sort=top` },
    { route: "GET features/{id}", path: `${p}/features/${fx.hotFeatureIds[0]}` },
    { route: "GET features/{id}/comments", path: `${p}/features/${fx.commentedFeatureIds[0]}/comments` },
  ];
  const refPort = await freePort();
  const reference = await startChild(
    "scripts/bench/ceiling.ts",
    { PORT: String(refPort), BODY_BYTES: "14420", REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `fbhitab:${randomBytes(4).toString("hex")}:` },
    `http://127.0.0.1:${refPort}/`,
  );
  const sides: { name: string; child: Child; base: string }[] = [];
  try {
    if (baselineDir) sides.push({ name: "baseline", ...(await startApi(resolve(baselineDir, "src/server.ts"))) });
    sides.push({ name: "current", ...(await startApi("src/server.ts")) });
    const none = async () => [];
    const results = new Map<string, LoadResult[]>();
    const push = (key: string, result: LoadResult) => results.set(key, [...(results.get(key) ?? []), result]);
    for (const side of sides)
      for (const r of routes) await runLoad({ url: `${side.base}${r.path}`, headers, connections, warmupSeconds: 0, seconds: 1 });
    await runLoad({ url: `http://127.0.0.1:${refPort}/`, headers: {}, connections, warmupSeconds: 0, seconds: 1 });
    for (let round = 0; round < rounds; round++) {
      for (const r of routes) {
        push(
          "reference",
          await runLoad({
            url: `http://127.0.0.1:${refPort}/`,
            headers: {},
            connections,
            warmupSeconds: 0,
            seconds,
            cpu: { server: reference.pid, database: none },
          }),
        );
        for (const side of sides) {
          const result = await runLoad({
            url: `${side.base}${r.path}`,
            headers,
            connections,
            warmupSeconds: 0,
            seconds,
            cpu: { server: side.child.pid, database: none },
          });
          if (result.non2xx > 0 || result.errors > 0)
            console.log(`  ${side.name} ${r.route}: non-2xx ${result.non2xx}, errors ${result.errors}`);
          push(`${side.name}\t${r.route}`, result);
        }
      }
      console.log(`round ${round + 1} done, load ${readFileSync("/proc/loadavg", "utf8").trim()}`);
    }
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const ref = mean(results.get("reference")!.map((x) => x.serverCpuMs));
    console.log(
      `reference: ${ref.toFixed(3)} ms CPU/request, ${Math.round(mean(results.get("reference")!.map((x) => x.reqPerSec)))} req/s`,
    );
    for (const r of routes) {
      for (const side of sides) {
        const runs = results.get(`${side.name}\t${r.route}`)!;
        const cpu = mean(runs.map((x) => x.serverCpuMs));
        console.log(
          `${side.name.padEnd(8)} ${r.route.padEnd(28)} ${cpu.toFixed(3)} ms CPU/request (${(cpu / ref).toFixed(2)}x reference), ${Math.round(mean(runs.map((x) => x.reqPerSec)))} req/s, p99 ${mean(runs.map((x) => x.p99)).toFixed(1)} ms`,
        );
      }
    }
  } finally {
    for (const side of sides) await side.child.stop();
    await reference.stop();
  }
}

await main();
