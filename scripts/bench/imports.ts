/**
 * Bench row "import" (imports-v3.md, "Speed"; docs/benchmarks.md, "Targets"): a CSV export of
 * 10,000 features, 100,000 votes and 20,000 comments (one zip of features.csv, votes.csv and
 * comments.csv) POSTed to the running server, which runs the job beside its requests. Measures
 * the time from the 202 to `succeeded` (goal <= 60 s), the server's RSS peak meanwhile (goal
 * < 400 MB; sampled from /proc every 200 ms), and the p99 of reads of another project made one
 * at a time while the import runs (goal < 100 ms), then checks the counts and deletes the
 * imported project.
 *
 *   npm run bench -- --quick --only=import     (from scripts/bench.ts)
 */
import { randomBytes } from "node:crypto";
import { zipSync } from "fflate";
import { migrateToLatest, openDatabase } from "../../db/connect.ts";
import { importSnapshot } from "../../src/admin/snapshot-import.ts";
import { RssSampler } from "./load.ts";
import type { Row } from "./report.ts";

/** The row's name (`--only=import` selects it). */
export const IMPORT_ROUTE = "import: CSV of 10,000 features, 100,000 votes, 20,000 comments (POST /admin/imports to succeeded)";

const FEATURES = 10_000;
const VOTES = 100_000;
const COMMENTS = 20_000;
const VOTERS = 20_000;

/** The three CSV files of the row, zipped: votes spread so that no voter votes twice for one feature. */
export function importExport(): Uint8Array {
  const features = ["title,description,status,board,tags,author_email,author_name,created_at,source_id"];
  for (let i = 0; i < FEATURES; i++) {
    features.push(
      `Imported request ${i},"Please add thing ${i}, with ""quotes""",${["open", "planned", "In progress", "Complete"][i % 4]},Ideas,"tag${i % 20},bench",voter${i % VOTERS}@bench.test,Voter ${i % VOTERS},2025-01-${String((i % 28) + 1).padStart(2, "0")} 10:00:00,f${i}`,
    );
  }
  const votes = ["feature_source_id,voter_email,voter_name,created_at"];
  for (let i = 0; i < VOTES; i++) {
    // Voter i % VOTERS votes for feature (i * 7 + floor(i / VOTERS)) % FEATURES: distinct pairs.
    const voter = i % VOTERS;
    const feature = (voter * 7 + Math.floor(i / VOTERS) * 1_001) % FEATURES;
    votes.push(`f${feature},voter${voter}@bench.test,Voter ${voter},2025-02-01 10:00:00`);
  }
  const comments = ["feature_source_id,content,source_id,parent_source_id,author_email,author_name,created_at"];
  for (let i = 0; i < COMMENTS; i++) {
    const parent = i % 4 === 3 ? `c${i - 1}` : "";
    const feature = parent ? (i - 1) % FEATURES : i % FEATURES;
    comments.push(
      `f${feature},Comment ${i} on this,c${i},${parent},voter${(i * 3) % VOTERS}@bench.test,Voter ${(i * 3) % VOTERS},2025-03-01 10:00:00`,
    );
  }
  const encode = (lines: string[]) => new TextEncoder().encode(`${lines.join("\n")}\n`);
  return zipSync({ "features.csv": encode(features), "votes.csv": encode(votes), "comments.csv": encode(comments) });
}

/**
 * Runs the row against the server at `base` (process `serverPid`) on `databaseUrl`, reading
 * `readPath` with `readKey` (another project) meanwhile.
 */
export async function benchImport(options: {
  databaseUrl: string;
  base: string;
  serverPid: number;
  readPath: string;
  readKey: string;
  log?: (line: string) => void;
}): Promise<Row> {
  const log = options.log ?? (() => {});
  const handle = await openDatabase({ DATABASE_URL: options.databaseUrl, poolSize: 2 });
  const slug = `bench-import-${randomBytes(4).toString("hex")}`;
  const secret = `bench_sk_${randomBytes(16).toString("hex")}`;
  try {
    await migrateToLatest(handle.db);
    await importSnapshot(
      handle.db,
      {
        format: "feedback-board-snapshot/1",
        project: { slug, name: "Bench import", plan: "pro" },
        keys: [{ kind: "secret", key: secret }],
        boards: [{ ref: "roadmap", kind: "roadmap", name: "Roadmap", columns: [{ ref: "open", name: "Open", status: "open" }] }],
      },
      {},
    );
    log("import: generating the CSV export ...");
    const file = importExport();
    log(`import: ${(file.length / 1024 / 1024).toFixed(1)} MB zipped; posting ...`);
    const form = new FormData();
    form.set("source", "csv");
    form.set("file", new Blob([Buffer.from(file)]), "export.zip");
    const rss = new RssSampler(options.serverPid);
    const latencies: number[] = [];
    let reading = true;
    const reads = (async () => {
      while (reading) {
        const started = performance.now();
        const response = await fetch(`${options.base}${options.readPath}`, { headers: { "X-API-Key": options.readKey } });
        await response.arrayBuffer();
        latencies.push(performance.now() - started);
      }
    })();
    const admin = `${options.base}/api/v3/projects/${slug}/admin/imports`;
    const started = performance.now();
    const created = await fetch(admin, { method: "POST", headers: { "X-API-Key": secret }, body: form });
    if (created.status !== 202) throw new Error(`import: POST answered ${created.status}: ${await created.text()}`);
    const { data } = (await created.json()) as { data: { id: string } };
    let object: { status: string; counts: Record<string, { created: number }>; error: unknown } | undefined;
    for (;;) {
      const answer = await fetch(`${admin}/${data.id}`, { headers: { "X-API-Key": secret } });
      object = ((await answer.json()) as { data: typeof object }).data;
      if (object?.status === "succeeded" || object?.status === "failed") break;
      if (performance.now() - started > 600_000) throw new Error("import: not finished after 10 minutes");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const seconds = (performance.now() - started) / 1000;
    reading = false;
    await reads;
    rss.stop();
    latencies.sort((a, b) => a - b);
    const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
    const counts = object?.counts ?? {};
    const ok =
      object?.status === "succeeded" &&
      counts.features?.created === FEATURES &&
      counts.votes?.created === VOTES &&
      counts.comments?.created === COMMENTS;
    log(
      `import: ${object?.status} in ${seconds.toFixed(1)} s, server RSS peak ${rss.maxMb.toFixed(0)} MB, reads p99 ${p(0.99).toFixed(1)} ms`,
    );
    return {
      route: IMPORT_ROUTE,
      project: "-",
      reqPerSec: latencies.length / seconds,
      p50: p(0.5),
      p99: p(0.99),
      bytes: file.length,
      non2xx: ok ? 0 : 1,
      note:
        `${object?.status} in ${seconds.toFixed(1)} s (goal <= 60 s); server RSS peak ${rss.maxMb.toFixed(0)} MB (goal < 400 MB); ` +
        `req/s, p50 and p99 are reads of another project (${options.readPath}) one at a time meanwhile (goal p99 < 100 ms)` +
        (ok ? "" : `; counts ${JSON.stringify(counts)}, error ${JSON.stringify(object?.error)}`),
    };
  } finally {
    await handle.db
      .deleteFrom("projects")
      .where("slug", "=", slug)
      .execute()
      .catch(() => {});
    await handle.close();
  }
}
