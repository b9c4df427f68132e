/**
 * The statements of a page build run alone, on one connection, under each `plan_cache_mode`
 * (docs/benchmarks.md, "Targets", page builds: which statement shapes Postgres should plan once):
 * for each generated
 * bench project and each statement, the CPU of the Postgres backend and of this process per
 * run, measured from /proc over `BENCH_PLAN_RUNS` runs (default 300) after 20 warm-up runs.
 *
 * `node --import tsx scripts/bench/plan-modes.ts` after `npm run bench` generated the projects.
 * Env: BENCH_PG, BENCH_DB as scripts/bench.ts; BENCH_PLAN_RUNS. Reads only.
 */
import { readFileSync } from "node:fs";
import { sql } from "kysely";
import { openDatabase } from "../../db/connect.ts";
import type { ProjectSettings } from "../../db/schema.ts";
import { readVoterCount } from "../../src/routes/board/board.repository.ts";
import { listCommentThreads } from "../../src/routes/comments/comments.repository.ts";
import { findFeature, listFeaturePage, listFeatures } from "../../src/routes/features/features.repository.ts";
import { findSimilarFeatureRows } from "../../src/routes/features/features.similar.repository.ts";
import { LARGE, SMALL } from "./dataset.ts";

const pgServer = process.env.BENCH_PG ?? "postgres://postgres@127.0.0.1:5432";
const dbName = process.env.BENCH_DB ?? "fb_bench";
const runs = Number(process.env.BENCH_PLAN_RUNS ?? 300);
const databaseUrl = Object.assign(new URL(pgServer), { pathname: `/${dbName}` }).toString();
const TICK_MS = 10; // USER_HZ = 100 on Linux

function backendCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

const handle = await openDatabase({ DATABASE_URL: databaseUrl, poolSize: 1 });
const { db } = handle;
const { rows: pidRows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db);
const pid = pidRows[0]!.pid;
const now = new Date();
const only = process.argv[2];

for (const spec of [SMALL, LARGE]) {
  const project = await db.selectFrom("projects").select(["id", "settings"]).where("slug", "=", spec.slug).executeTakeFirst();
  if (!project) continue;
  const p = { id: project.id, settings: project.settings as ProjectSettings };
  const hot = await sql<{ id: number }>`SELECT id FROM features WHERE project_id = ${p.id} ORDER BY vote_count DESC LIMIT 50`.execute(db);
  const commented = await sql<{
    id: number;
  }>`SELECT id FROM features WHERE project_id = ${p.id} ORDER BY comment_count DESC LIMIT 50`.execute(db);
  const page = { page: 1, per_page: 20 };
  // Texts never repeated within a mode: headings with two adjacent characters swapped (a typo),
  // and novel words around one word of a heading (near-duplicates of nothing).
  const headings = await sql<{
    heading: string;
  }>`SELECT heading FROM features WHERE project_id = ${p.id} ORDER BY id LIMIT ${runs * 3 + 60}`.execute(db);
  const novelWords = ["zoom", "webinar", "kiosk", "barcode", "voicemail", "quota", "sandbox", "locale", "captcha", "hotkey"];
  let textRun = 0;
  const typoText = () => {
    const text = headings.rows[textRun++ % headings.rows.length]!.heading;
    const at = textRun % (text.length - 1);
    return text.slice(0, at) + text[at + 1] + text[at] + text.slice(at + 2);
  };
  const novelText = () => {
    const i = textRun++;
    const word = headings.rows[i % headings.rows.length]!.heading.split(" ")[1] ?? "board";
    return `${novelWords[i % 10]} ${novelWords[Math.floor(i / 10) % 10]} ${word}`;
  };
  // A listing without `board` lists the roadmap (features.handlers.ts resolveTarget).
  const roadmap = await db
    .selectFrom("boards")
    .select("id")
    .where("project_id", "=", p.id)
    .where("kind", "=", "roadmap")
    .executeTakeFirstOrThrow();
  const all = { boardId: roadmap.id, column: null };
  const { total } = await listFeatures(db, p, all, { sort: "top", page, voterId: null, now });
  const cases: Record<string, (i: number) => Promise<unknown>> = {
    "features?sort=top, total counted": () => listFeatures(db, p, all, { sort: "top", page, voterId: null, now }),
    "features?sort=top, total known": () => listFeatures(db, p, all, { sort: "top", page, voterId: null, now, knownTotal: total }),
    "features?sort=top, JSON, total known": () => listFeaturePage(db, p, all, { sort: "top", page, voterId: null, now, knownTotal: total }),
    "features?sort=top, JSON, total counted": () => listFeaturePage(db, p, all, { sort: "top", page, voterId: null, now }),
    "features?sort=new, total known": () => listFeatures(db, p, all, { sort: "new", page, voterId: null, now, knownTotal: total }),
    "features/{id}": (i) => findFeature(db, p, hot.rows[i % hot.rows.length]!.id, { voterId: null, now }),
    "features/{id}/comments": (i) =>
      listCommentThreads(db, { project: p, featureId: commented.rows[i % commented.rows.length]!.id, viewerId: null }, "newest", page),
    "board voter_count": () => readVoterCount(db, p.id),
    "features/similar, typo": () => findSimilarFeatureRows(db, p, typoText(), { voterId: null, limit: 10, now }),
    "features/similar, novel": () => findSimilarFeatureRows(db, p, novelText(), { voterId: null, limit: 10, now }),
  };
  for (const [name, run] of Object.entries(cases)) {
    if (only && !name.includes(only)) continue;
    for (const mode of ["auto", "force_generic_plan", "force_custom_plan"]) {
      await sql`SELECT set_config('plan_cache_mode', ${mode}, false)`.execute(db);
      for (let i = 0; i < 20; i++) await run(i);
      const db0 = backendCpuMs(pid);
      const me0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < runs; i++) await run(i);
      const wall = (performance.now() - t0) / runs;
      const me = process.cpuUsage(me0);
      const dbMs = (backendCpuMs(pid) - db0) / runs;
      const nodeMs = (me.user + me.system) / 1000 / runs;
      console.log(
        `${spec.slug.padEnd(12)} ${name.padEnd(36)} ${mode.padEnd(18)} db ${dbMs.toFixed(3)} ms  node ${nodeMs.toFixed(3)} ms  wall ${wall.toFixed(3)} ms`,
      );
    }
  }
}
await handle.close();
