/**
 * `npm run bench`: generates a small and a large project in Postgres (scripts/bench/generate.ts),
 * starts the API in production mode as a child process (Postgres + Redis, every middleware on,
 * rate budgets raised so the limiter still runs), measures the hot routes with autocannon (warm-up,
 * then a fixed time at 32 connections) next to a bare Hono ceiling app, checks the counters after
 * the vote + withdraw cycle, samples the server's RSS, prints a table and writes it into docs/benchmarks.md.
 *
 * Flags: --quick (small project only, 3 s per route, docs/benchmarks.md untouched unless --readme),
 * --reuse (keep fb_bench if the projects are there), --only=<text> (routes whose name contains
 * it, several as "a|b"; "mixed" runs the mixed-load section, scripts/bench/mixed.ts; "hits" the
 * cached-hits section, scripts/bench/hits.ts; "widget" the widget's first draw in chromium,
 * scripts/bench/widget.ts, on its own database {BENCH_DB}_widget, --widget-samples=N page
 * loads, default 40, 15 with --quick), --seconds=N, --connections=N, --no-readme,
 * --mixed-rates=0,5,20,50,200 (writes/s of the mixed-load rows), --ab-only (with
 * BENCH_BASELINE_DIR: no read row on its own, only the A/B runs).
 * Env: BENCH_PG (server URL, default postgres://postgres@127.0.0.1:5432), BENCH_DB (fb_bench),
 * BENCH_REDIS (redis://127.0.0.1:6379), BENCH_SERVER_NODE_ARGS (node flags for the server on top
 * of those `npm start` uses, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it),
 * BENCH_BASELINE_DIR (a checkout of an earlier commit to A/B against in the same run: the vote
 * cycle, the owner PATCH, the uncached page builds and similar-features rows,
 * scripts/bench/baseline-ab.ts, with BENCH_AB_ROUNDS alternating rounds per side, default 4; the
 * mixed load, scripts/bench/mixed.ts; and the cached hits, scripts/bench/hits.ts,
 * BENCH_AB_ROUNDS rounds of 3 s, or --seconds).
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";
import type { RequestSpec } from "autocannon";
import postgres, { type Sql } from "postgres";
import { migrateToLatest, openDatabase } from "../db/connect.ts";
import { hashSecret } from "../src/lib/rules/secrets.ts";
import { type AbSide, describeAb, runBaselineAb } from "./bench/baseline-ab.ts";
import { checkCounters } from "./bench/counters.ts";
import { benchKeys, LARGE, type ProjectSpec, SEARCH_TERM, SMALL } from "./bench/dataset.ts";
import { benchEmailDigest, EMAIL_DIGEST_ROUTE } from "./bench/email.ts";
import { type Fixtures, loadFixtures } from "./bench/fixtures.ts";
import { generateProject, settleVisibility } from "./bench/generate.ts";
import { hitsSection } from "./bench/hits.ts";
import { benchImport, IMPORT_ROUTE } from "./bench/imports.ts";
import { freePort, RssSampler, runLoad, startChild } from "./bench/load.ts";
import { mixedLoadSection } from "./bench/mixed.ts";
import { benchNotifications, NOTIFICATION_ROUTES } from "./bench/notifications.ts";
import { type Row, renderReport, writeReadme } from "./bench/report.ts";
import { similarCases } from "./bench/similar.ts";
import { benchWidgetFirstDraw, WIDGET_FIRST_DRAW_ROUTE } from "./bench/widget.ts";

/** The reference row: the ceiling app plus the one Redis round trip of every keyed request. */
const REDIS_REFERENCE_ROUTE = "reference: bare Hono + rate-limit Redis round trip";

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    reuse: { type: "boolean", default: false },
    readme: { type: "boolean", default: false },
    "no-readme": { type: "boolean", default: false },
    only: { type: "string" },
    seconds: { type: "string" },
    connections: { type: "string" },
    "mixed-rates": { type: "string" },
    "ab-only": { type: "boolean", default: false },
    "widget-samples": { type: "string" },
  },
});
const quick = flags.quick === true;
const seconds = Number(flags.seconds ?? (quick ? 3 : 10));
const warmupSeconds = quick ? 1 : 3;
const connections = Number(flags.connections ?? 32);
const specs: ProjectSpec[] = quick ? [SMALL] : [SMALL, LARGE];
const pgServer = process.env.BENCH_PG ?? "postgres://postgres@127.0.0.1:5432";
const dbName = process.env.BENCH_DB ?? "fb_bench";
const urlOf = (database: string) => Object.assign(new URL(pgServer), { pathname: `/${database}` }).toString();
const databaseUrl = urlOf(dbName);
const redisUrl = process.env.BENCH_REDIS ?? "redis://127.0.0.1:6379";
const log = (line: string) => process.stderr.write(`${line}\n`);
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/**
 * VACUUM (ANALYZE) of the tables a vote cycle rewrites. A cycle leaves ~2 dead row versions per
 * write in features (every index) and voters; where autovacuum is off (it is on this machine's
 * CI configuration) they pile up across phases and --reuse runs and slow every later route.
 */
async function vacuumVotedTables(sql: Sql): Promise<void> {
  await sql.unsafe("VACUUM (ANALYZE) features, voters, votes, projects");
}

/** Creates (or with --reuse keeps) the bench database and every project this run needs. */
async function prepareDatabase(): Promise<string[]> {
  const admin = postgres(urlOf("postgres"), { max: 1, onnotice: () => {} });
  const [exists] = await admin`SELECT 1 FROM pg_database WHERE datname = ${dbName}`;
  if (!flags.reuse || !exists) {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.unsafe(`CREATE DATABASE ${dbName}`);
  }
  await admin.end();
  const handle = await openDatabase({ DATABASE_URL: databaseUrl, poolSize: 1 });
  await migrateToLatest(handle.db);
  await handle.close();
  const notes: string[] = [];
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  if (flags.reuse && exists) {
    await vacuumVotedTables(sql);
    await settleVisibility(sql);
  }
  for (const spec of specs) {
    // A project is generated in one transaction, so if it exists it is complete.
    const [present] = await sql`SELECT 1 FROM projects WHERE slug = ${spec.slug}`;
    if (present) {
      notes.push(`${spec.slug}: reused from an earlier run (--reuse)`);
      continue;
    }
    const generated = await generateProject(databaseUrl, spec);
    notes.push(
      `${spec.slug} generated in ${generated.seconds.toFixed(1)} s (${spec.features.toLocaleString("en-US")} features, ` +
        `${spec.votes.toLocaleString("en-US")} votes, ${spec.voters.toLocaleString("en-US")} voters, ${spec.comments.toLocaleString("en-US")} comments; COPY + counters in SQL + VACUUM ANALYZE)`,
    );
  }
  await sql.end();
  return notes;
}

interface ReadCase {
  route: string;
  paths: string[];
  /** The path of the i-th request, when every request's differs (uncached rows); paths[0] is the first. */
  pathAt?: (i: number) => string;
  tokens?: string[];
  /** Connections of this row when not the run's (--connections). */
  connections?: number;
}

function readCases(fx: Fixtures): ReadCase[] {
  const p = `/api/v3/projects/${fx.slug}`;
  return [
    { route: "GET features?sort=top", paths: [`${p}/features?sort=top`] },
    { route: "GET features?sort=trending", paths: [`${p}/features?sort=trending`] },
    { route: "GET features?sort=new", paths: [`${p}/features?sort=new`] },
    { route: `GET features?q=${SEARCH_TERM}`, paths: [`${p}/features?q=${SEARCH_TERM}`] },
    { route: "GET features?tag=<id>", paths: [`${p}/features?tag=${fx.tagId}`] },
    { route: "GET features/{id}", paths: fx.hotFeatureIds.map((id) => `${p}/features/${id}`) },
    { route: "GET projects/{slug} (board)", paths: [p] },
    { route: "GET features/{id}/comments", paths: fx.commentedFeatureIds.map((id) => `${p}/features/${id}/comments`) },
    { route: "GET features?sort=top + X-VF-Anon", paths: [`${p}/features?sort=top`], tokens: fx.voterTokens },
    // Every request a query string never seen before (an ignored parameter): the shared read
    // cache never hits, so these rows are the page builds (misses) of the rows above them.
    ...uncachedCases(fx),
    ...similarCases(fx),
  ];
}

/**
 * The uncached rows: one per kind of page build (a listing, a feature's detail, the board
 * document, a comments page), each request with a `nocache` value no request of the process
 * used before (a counter shared by every run, so an A/B's later rounds miss too).
 */
function uncachedCases(fx: Fixtures): ReadCase[] {
  const p = `/api/v3/projects/${fx.slug}`;
  const unique = (route: string, pathOf: (i: number) => string): ReadCase => ({
    route,
    paths: [pathOf(0)],
    pathAt: (i) => pathOf(i),
  });
  const hot = fx.hotFeatureIds;
  const commented = fx.commentedFeatureIds;
  return [
    unique("GET features?sort=top, uncached", (i) => `${p}/features?sort=top&nocache=${i}`),
    unique("GET features/{id}, uncached", (i) => `${p}/features/${hot[i % hot.length]}?nocache=${i}`),
    unique("GET projects/{slug} (board), uncached", (i) => `${p}?nocache=${i}`),
    unique("GET features/{id}/comments, uncached", (i) => `${p}/features/${commented[i % commented.length]}/comments?nocache=${i}`),
  ];
}

/** Requests made by rotating() so far in this process (uncached rows never repeat a path). */
let requestCounter = 1;

/** A request sequence rotating over `paths` (or pathAt) and identity tokens across all connections. */
function rotating(paths: string[], tokens?: string[], pathAt?: (i: number) => string): RequestSpec[] {
  let next = 0;
  return [
    {
      method: "GET",
      setupRequest: (request) => {
        const i = next++;
        const headers = tokens ? { ...request.headers, "X-VF-Anon": tokens[i % tokens.length]! } : request.headers;
        const path = pathAt ? pathAt(requestCounter++) : paths[i % paths.length]!;
        return { ...request, path, ...(headers ? { headers } : {}) };
      },
    },
  ];
}

async function bodyBytes(url: string, headers: Record<string, string>): Promise<number> {
  const response = await fetch(url, { headers });
  const body = await response.arrayBuffer();
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${Buffer.from(body).toString("utf8").slice(0, 300)}`);
  return body.byteLength;
}

/** Deletes, through the API, votes of the pool left over by connections cut at the end of a run. */
async function withdrawLeftovers(sql: Sql, base: string, fx: Fixtures, headers: Record<string, string>): Promise<number> {
  // Requests the load generator abandoned at the end may still be running on the server.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const ids = [...new Set(fx.votePairs.map((pair) => pair.featureId))];
  const hashes = fx.votePairs.map((pair) => hashSecret(pair.token));
  // The pairs had no vote when the fixtures were read, so any vote of a pair now is the bench's.
  const rows = await sql<{ feature_id: number; anon_token_hash: string }[]>`
    SELECT v.feature_id, vo.anon_token_hash FROM votes v JOIN voters vo ON vo.id = v.voter_id
    WHERE vo.project_id = ${fx.projectId} AND vo.anon_token_hash = ANY(${hashes}) AND v.feature_id = ANY(${ids})`;
  const pairByKey = new Map(fx.votePairs.map((pair) => [`${hashSecret(pair.token)}:${pair.featureId}`, pair]));
  let withdrawn = 0;
  for (const row of rows) {
    const pair = pairByKey.get(`${row.anon_token_hash}:${row.feature_id}`);
    if (!pair) continue;
    const response = await fetch(`${base}/api/v3/projects/${fx.slug}/features/${pair.featureId}/vote`, {
      method: "DELETE",
      headers: { ...headers, "X-VF-Anon": pair.token },
    });
    await response.arrayBuffer();
    if (response.ok) withdrawn++;
  }
  return withdrawn;
}

/** POST vote then DELETE vote on one connection, each cycle with the next (voter, feature) pair. */
function voteCycle(fx: Fixtures): RequestSpec[] {
  let next = 0;
  const path = (featureId: number) => `/api/v3/projects/${fx.slug}/features/${featureId}/vote`;
  return [
    {
      method: "POST",
      setupRequest: (request, context) => {
        const pair = fx.votePairs[next++ % fx.votePairs.length]!;
        context.pair = pair;
        return { ...request, method: "POST", path: path(pair.featureId), headers: { ...request.headers, "X-VF-Anon": pair.token } };
      },
    },
    {
      method: "DELETE",
      setupRequest: (request, context) => {
        const pair = context.pair as { token: string; featureId: number };
        return { ...request, method: "DELETE", path: path(pair.featureId), headers: { ...request.headers, "X-VF-Anon": pair.token } };
      },
    },
  ];
}

/**
 * The owner row (owner-api-v3.md): PATCH /admin/features/{id} moving the hot features between
 * the roadmap's planned and in_progress columns by status alone (Rule 1), one request at a time
 * per connection, each a transaction that retires the project's cached answers.
 */
function ownerStatusPatches(fx: Fixtures): RequestSpec[] {
  let next = 0;
  return [
    {
      method: "PATCH",
      setupRequest: (request) => {
        const n = next++;
        const featureId = fx.hotFeatureIds[n % fx.hotFeatureIds.length]!;
        const status = Math.floor(n / fx.hotFeatureIds.length) % 2 === 0 ? "in_progress" : "planned";
        return {
          ...request,
          method: "PATCH",
          path: `/api/v3/projects/${fx.slug}/admin/features/${featureId}`,
          headers: { ...request.headers, "Content-Type": "application/json" },
          body: JSON.stringify({ status }),
        };
      },
    },
  ];
}

/** The table row of a write route's run (writes/s), after logging any answer that was not 2xx. */
function writeRow(route: string, project: Row["project"], result: Awaited<ReturnType<typeof runLoad>>): Row {
  if (result.non2xx > 0 || result.errors > 0)
    log(`  non-2xx ${result.non2xx}, errors ${result.errors}: ${JSON.stringify(result.statuses)}`);
  const { reqPerSec, p50, p99, non2xx, serverCpuMs, dbCpuMs } = result;
  return { route, project, reqPerSec, p50, p99, bytes: 0, non2xx, serverCpuMs, dbCpuMs, note: "writes/s" };
}

/** The node flags `npm start` gives the server (package.json config.server_node_args). */
function serverNodeArgs(): string[] {
  const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { config?: { server_node_args?: string } };
  return (pkg.config?.server_node_args ?? "").split(" ").filter(Boolean);
}

async function main(): Promise<void> {
  const started = new Date();
  const generation = await prepareDatabase();
  const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
  const fixtures = new Map<ProjectSpec, Fixtures>();
  for (const spec of specs) fixtures.set(spec, await loadFixtures(sql, spec));

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const limit = "1000000000";
  const redisKeyPrefix = `fbbench:${randomBytes(4).toString("hex")}:`;
  const apiEnv = (apiPort: number, prefix = redisKeyPrefix) => ({
    NODE_ENV: "production",
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: prefix,
    PORT: String(apiPort),
    HOST: "127.0.0.1",
    DEMO: "off",
    LOG_LEVEL: "warn",
    RATE_LIMIT_READS_PER_MINUTE: limit,
    RATE_LIMIT_WRITES_PER_MINUTE: limit,
    RATE_LIMIT_EMBED_READS_PER_MINUTE: limit,
    RATE_LIMIT_EMBED_WRITES_PER_MINUTE: limit,
    BENCH_READ_STATS: `/tmp/fbbench-read-stats-${process.pid}-${apiPort}.json`,
  });
  const nodeArgs = [...serverNodeArgs(), ...(process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean)];
  const server = await startChild("src/server.ts", apiEnv(port), `${base}/api/v3/health`, nodeArgs);
  const serverEnv = apiEnv(port);
  const rss = new RssSampler(server.pid);
  const rows: Row[] = [];
  const checks: string[] = [];
  let ceilingReqPerSec = 0;
  let ceilingNote = "";
  let mixedReport = "";
  let hitsReport = "";
  const cpu = {
    server: server.pid,
    database: async () =>
      (
        await sql<{ pid: number }[]>`
      SELECT pid FROM pg_stat_activity WHERE datname = ${dbName} AND backend_type = 'client backend' AND pid <> pg_backend_pid()`
      ).map((r) => r.pid),
  };
  // --only="a|b": the rows and sections any of the alternatives selects.
  const onlyParts = flags.only?.split("|").filter(Boolean);
  const only = (route: string) => onlyParts === undefined || onlyParts.some((part) => route.includes(part));
  const section = (name: string) => onlyParts === undefined || onlyParts.some((part) => part.includes(name));
  const baselineDir = process.env.BENCH_BASELINE_DIR;

  try {
    // The ceiling answers with a body the size of the largest project's features page. It is
    // measured before and after the routes and the mean is the 100 %: on a shared VM the
    // machine's speed drifts during a run.
    const biggest = fixtures.get(specs[specs.length - 1]!)!;
    const listBytes = await bodyBytes(`${base}/api/v3/projects/${biggest.slug}/features?sort=top`, {
      "X-API-Key": benchKeys(biggest.slug).secret,
    });
    const ceilingRuns: Awaited<ReturnType<typeof runLoad>>[] = [];
    const noDatabase = async () => [];
    // `withRedis`: the reference app that also makes the API's per-request Redis round trip.
    const measureReference = async (withRedis: boolean) => {
      const ceilingPort = await freePort();
      const env: Record<string, string> = { PORT: String(ceilingPort), BODY_BYTES: String(listBytes) };
      if (withRedis) Object.assign(env, { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `fbbench:${randomBytes(4).toString("hex")}:` });
      const ceiling = await startChild("scripts/bench/ceiling.ts", env, `http://127.0.0.1:${ceilingPort}/`);
      try {
        log(`${withRedis ? "bare Hono + the rate limiter's Redis round trip" : "ceiling (bare Hono"}, ${listBytes} bytes) ...`);
        return await runLoad({
          url: `http://127.0.0.1:${ceilingPort}/`,
          headers: {},
          connections,
          warmupSeconds,
          seconds,
          cpu: { server: ceiling.pid, database: noDatabase },
        });
      } finally {
        await ceiling.stop();
      }
    };
    const measureCeiling = async () => {
      const result = await measureReference(false);
      ceilingRuns.push(result);
      return result;
    };
    const referenceRow = (route: string, result: Awaited<ReturnType<typeof runLoad>>): Row => ({
      route,
      project: "-",
      reqPerSec: result.reqPerSec,
      p50: result.p50,
      p99: result.p99,
      bytes: listBytes,
      non2xx: result.non2xx,
      serverCpuMs: result.serverCpuMs,
      dbCpuMs: 0,
    });
    const ceilingRow = referenceRow("ceiling: bare Hono, fixed body", await measureCeiling());
    rows.push(ceilingRow);
    if (only(REDIS_REFERENCE_ROUTE)) rows.push(referenceRow(REDIS_REFERENCE_ROUTE, await measureReference(true)));

    const targets = specs.map((spec) => ({
      spec,
      fx: fixtures.get(spec)!,
      project: spec === LARGE ? ("large" as const) : ("small" as const),
      headers: { "X-API-Key": benchKeys(spec.slug).secret },
    }));
    const rowsOf = new Map(targets.map((target) => [target.project, [] as Row[]]));
    // Route by route, the small project and then the large one back to back, so the large/small
    // column compares two runs seconds apart rather than minutes (this VM's speed drifts).
    const caseCount = readCases(targets[0]!.fx).length;
    for (let index = 0; index < caseCount; index++) {
      for (const { fx, project, headers } of targets) {
        const item = readCases(fx)[index]!;
        if (!only(item.route) || flags["ab-only"]) continue;
        const sampleHeaders = item.tokens ? { ...headers, "X-VF-Anon": item.tokens[0]! } : headers;
        const bytes = await bodyBytes(`${base}${item.paths[0]}`, sampleHeaders);
        log(`${project}: ${item.route} ...`);
        const result = await runLoad({
          url: `${base}${item.paths[0]}`,
          headers,
          requests: rotating(item.paths, item.tokens, item.pathAt),
          connections: item.connections ?? connections,
          warmupSeconds,
          seconds,
          cpu,
        });
        rowsOf.get(project)!.push({
          route: item.route,
          project,
          reqPerSec: result.reqPerSec,
          p50: result.p50,
          p99: result.p99,
          bytes,
          non2xx: result.non2xx,
          serverCpuMs: result.serverCpuMs,
          dbCpuMs: result.dbCpuMs,
        });
        if (result.non2xx > 0 || result.errors > 0)
          log(`  non-2xx ${result.non2xx}, errors ${result.errors}: ${JSON.stringify(result.statuses)}`);
      }
    }
    for (const { fx, project, headers } of targets) {
      const route = "POST+DELETE vote (cycle)";
      if (!only(route)) continue;
      log(`${project}: ${route} ...`);
      const load = { url: `${base}/api/v3/health`, headers, connections, requests: voteCycle(fx) };
      await runLoad({ ...load, warmupSeconds: 0, seconds: warmupSeconds });
      await withdrawLeftovers(sql, base, fx, headers);
      const result = await runLoad({ ...load, warmupSeconds: 0, seconds, cpu });
      const leftovers = await withdrawLeftovers(sql, base, fx, headers);
      rowsOf.get(project)!.push(writeRow(route, project, result));
      const check = await checkCounters(sql, fx.projectId);
      await vacuumVotedTables(sql);
      checks.push(
        `${project}: after ${result.requests.toLocaleString("en-US")} vote/withdraw requests (${leftovers} cut off at the end withdrawn after), ` +
          (check.exact.length === 0
            ? "vote_count, weighted_score, comment_count, like_count, voters.vote_count and the project's voter count (each shard) all equal COUNT(*)/SUM() of their rows"
            : `COUNTER MISMATCHES: ${check.exact.slice(0, 5).join("; ")}`) +
          (check.trendingOff === 0
            ? "; trending_score within 1e-6 of a recomputation everywhere"
            : `; trending_score off a recomputation on ${check.trendingOff} features (float log-sum-exp; e.g. ${check.trendingExamples[0]})`),
      );
    }
    if (baselineDir && uncachedCases(targets[0]!.fx).some((item) => only(item.route))) {
      // Page builds A/B (docs/benchmarks.md, "Targets", page builds): each uncached row of each
      // project alternates the
      // baseline server and this tree's; nothing is written, so there is nothing to reset.
      for (const { fx, project, headers } of targets) {
        for (const item of uncachedCases(fx)) {
          if (!only(item.route)) continue;
          const route = `${item.route} (${project})`;
          const ab = await runBaselineAb(
            {
              baselineDir,
              env: serverEnv,
              nodeArgs,
              headers,
              connections,
              warmupSeconds,
              seconds,
              route,
              unit: "req/s",
              requests: () => rotating(item.paths, undefined, item.pathAt),
              rounds: Number(process.env.BENCH_AB_ROUNDS ?? 4),
              databasePids: cpu.database,
              reset: async () => {},
            },
            log,
          );
          checks.push(describeAb(route, ab, 0.1, "req/s"));
        }
      }
    }
    if (baselineDir && only("POST+DELETE vote (cycle)")) {
      // Each run starts from no vote of the pool and no subscription: the current side pays for
      // creating every subscription (the insert path, not the cheaper conflict of a re-vote).
      const { fx, headers } = targets[0]!;
      const reset = async (at: string) => {
        await withdrawLeftovers(sql, at, fx, headers);
        await sql`DELETE FROM subscriptions WHERE project_id = ${fx.projectId}`;
        await vacuumVotedTables(sql);
      };
      const common = { baselineDir, env: serverEnv, nodeArgs, headers, connections, warmupSeconds, seconds, reset };
      const ab = await runBaselineAb(
        {
          ...common,
          route: "POST+DELETE vote (cycle)",
          requests: () => voteCycle(fx),
          rounds: Number(process.env.BENCH_AB_ROUNDS ?? 4),
          databasePids: cpu.database,
        },
        log,
      );
      checks.push(describeAb("POST+DELETE vote (cycle)", ab));
    }
    for (const { fx, project, headers } of targets) {
      const route = "PATCH admin/features/{id} status (owner)";
      if (!only(route)) continue;
      log(`${project}: ${route} ...`);
      const result = await runLoad({
        url: `${base}/api/v3/health`,
        headers,
        connections,
        requests: ownerStatusPatches(fx),
        warmupSeconds,
        seconds,
        cpu,
      });
      rowsOf.get(project)!.push(writeRow(route, project, result));
      await vacuumVotedTables(sql);
    }
    if (baselineDir && only("PATCH admin/features/{id} status (owner)")) {
      const { fx, headers } = targets[0]!;
      const route = "PATCH admin/features/{id} status (owner)";
      const common = { baselineDir, env: serverEnv, nodeArgs, headers, connections, warmupSeconds, seconds };
      const rounds = Number(process.env.BENCH_AB_ROUNDS ?? 4);
      const reset = () => vacuumVotedTables(sql);
      const ab = await runBaselineAb(
        { ...common, route, requests: () => ownerStatusPatches(fx), rounds, databasePids: cpu.database, reset },
        log,
      );
      checks.push(describeAb(route, ab));
    }
    if (baselineDir && only("similar")) {
      // The uncached similar-features rows, baseline and this tree alternating on each project.
      // Each run asks texts neither server has seen (a slice of the row's paths per round), the
      // same slice on both sides, so the in-process read cache never answers.
      const rounds = Number(process.env.BENCH_AB_ROUNDS ?? 4);
      for (const { fx, project, headers } of targets) {
        for (const item of similarCases(fx).filter((entry) => !entry.route.includes("(cached)"))) {
          const route = `${item.route}`;
          log(`${project}: A/B ${route} ...`);
          const slice = Math.floor(item.paths.length / (rounds + 1));
          const ab = await runBaselineAb(
            {
              baselineDir,
              env: serverEnv,
              nodeArgs,
              headers,
              connections: item.connections ?? connections,
              warmupSeconds,
              seconds,
              route,
              unit: "req/s",
              // The owner's paths (hot features) repeat; owner reads are never cached.
              requests: (_side, run) => rotating(item.paths.slice((run + 1) * slice, (run + 2) * slice)),
              rounds,
              databasePids: cpu.database,
              reset: async () => {},
            },
            log,
          );
          const sideRow = (name: string, side: AbSide): Row => ({
            route: `${route} [${name}]`,
            project,
            reqPerSec: side.reqPerSec,
            p50: mean(side.runs.map((run) => run.p50)),
            p99: side.p99,
            bytes: 0,
            non2xx: side.runs.reduce((sum, run) => sum + run.non2xx, 0),
            serverCpuMs: mean(side.runs.map((run) => run.serverCpuMs)),
            dbCpuMs: mean(side.runs.map((run) => run.dbCpuMs)),
          });
          rowsOf.get(project)!.push(sideRow("A/B baseline", ab.baseline), sideRow("A/B this tree", ab.current));
          checks.push(describeAb(`${project}: ${route}`, ab, 0.1, "req/s"));
        }
      }
    }
    const { fx: nfx, headers: nHeaders } = targets[0]!;
    if (Object.values(NOTIFICATION_ROUTES).some(only)) {
      const featureIds: [number, number] = [nfx.hotFeatureIds[0]!, nfx.hotFeatureIds[1]!];
      const run = { sql, base, projectId: nfx.projectId, slug: nfx.slug, featureIds, headers: nHeaders, log };
      const result = await benchNotifications({ ...run, rounds: quick ? 3 : 6 });
      rowsOf.get("small")!.push(...result.rows);
      checks.push(...result.checks);
    }
    /** An API server of its own (this tree, or the checkout in `cwd`), sharing nothing in Redis with others. */
    const startApi = async (cwd: string | undefined, prefix: string, env: Record<string, string> = {}) => {
      const apiPort = await freePort();
      const serverEnv = { ...apiEnv(apiPort, prefix), ...env };
      const child = await startChild("src/server.ts", serverEnv, `http://127.0.0.1:${apiPort}/api/v3/health`, nodeArgs, cwd);
      return {
        label: cwd ?? "this tree",
        base: `http://127.0.0.1:${apiPort}`,
        pid: child.pid,
        statsFile: serverEnv.BENCH_READ_STATS,
        stop: child.stop,
      };
    };
    if (section("hits")) {
      const { fx, headers } = targets[0]!;
      log("cached hits: reference, baseline and this tree in alternating rounds ...");
      hitsReport = await hitsSection({
        fx,
        headers,
        // The request path alone: no webhook worker polling beside it.
        startApi: (cwd) => startApi(cwd, `fbbenchhits:${randomBytes(4).toString("hex")}:`, { WEBHOOK_WORKER: "off" }),
        baselineDir: process.env.BENCH_BASELINE_DIR,
        redisUrl,
        bodyBytes: listBytes,
        rounds: Number(process.env.BENCH_AB_ROUNDS ?? 4),
        seconds: flags.seconds === undefined ? 3 : seconds,
        connections,
        log,
      });
    }
    if (section("mixed")) {
      mixedReport = await mixedLoadSection({
        targets,
        primary: { label: "this tree", base, pid: server.pid, statsFile: apiEnv(port).BENCH_READ_STATS },
        startApi,
        redisPrefix: redisKeyPrefix,
        baselineDir: process.env.BENCH_BASELINE_DIR,
        databasePids: cpu.database,
        connections,
        seconds,
        warmupSeconds,
        rates: (flags["mixed-rates"] ?? "0,5,20,50,200").split(",").map(Number),
        twoInstanceRate: 20,
        log,
        afterProject: () => vacuumVotedTables(sql),
      });
    }
    // Shown project by project.
    for (const { project } of targets) rows.push(...rowsOf.get(project)!);
    if (only(EMAIL_DIGEST_ROUTE)) rows.push(await benchEmailDigest(databaseUrl, log));
    if (only(WIDGET_FIRST_DRAW_ROUTE) && !flags["ab-only"]) {
      const admin = postgres(urlOf("postgres"), { max: 1, onnotice: () => {} });
      try {
        const row = await benchWidgetFirstDraw({
          admin,
          databaseName: `${dbName}_widget`,
          databaseUrl: urlOf(`${dbName}_widget`),
          redisUrl,
          redisKeyPrefix: `fbbenchwidget:${randomBytes(4).toString("hex")}:`,
          nodeArgs,
          samples: Number(flags["widget-samples"] ?? (quick ? 15 : 40)),
          log,
        });
        rows.push(row);
      } finally {
        await admin.end();
      }
    }
    if (only(IMPORT_ROUTE)) {
      // Reads of another project (the small one's features page) while the import runs beside them.
      const reader = targets.find((target) => target.project === "small") ?? targets[0]!;
      rows.push(
        await benchImport({
          databaseUrl,
          base,
          serverPid: server.pid,
          readPath: `/api/v3/projects/${reader.fx.slug}/features?sort=top`,
          readKey: benchKeys(reader.fx.slug).secret,
          log,
        }),
      );
    }
    await measureCeiling();
    ceilingReqPerSec = mean(ceilingRuns.map((run) => run.reqPerSec));
    ceilingRow.reqPerSec = ceilingReqPerSec;
    ceilingRow.serverCpuMs = mean(ceilingRuns.map((run) => run.serverCpuMs));
    ceilingNote = `measured before and after the routes: ${ceilingRuns.map((run) => Math.round(run.reqPerSec).toLocaleString("en-US")).join(" and ")} req/s, mean used`;
  } finally {
    rss.stop();
    await server.stop();
    await sql.end();
  }

  const cpuModel = /model name\s*:\s*(.+)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? "unknown CPU";
  const table = renderReport(rows, {
    date: started.toISOString().replace(/\.\d+Z$/, "Z"),
    nproc: availableParallelism(),
    cpu: cpuModel,
    connections,
    seconds,
    warmupSeconds,
    ceilingReqPerSec,
    ceilingNote,
    maxRssMb: rss.maxMb,
    generation,
    checks,
  });
  const report = [table, hitsReport, mixedReport].filter(Boolean).join("\n\n");
  process.stdout.write(`\n${report}\n`);
  const writeIt = !flags["no-readme"] && (!quick || flags.readme) && flags.only === undefined;
  if (writeIt) {
    writeReadme("docs/benchmarks.md", report);
    log("docs/benchmarks.md: bench section updated");
  }
}

await main();
