/**
 * Imports across processes (imports-v3.md, "How an import runs" and "Command line"), on one
 * Postgres with Redis and real server processes:
 * - two runners (two servers) run each import exactly once (one attempt, one import.completed);
 * - SIGKILL of the server running an import leaves the board as it was (its transaction never
 *   committed); after the lease runs out another server runs it to the end, as attempt 2;
 * - the admin command line: exit 2 for bad arguments, 0 with the ImportObject on stdout for a
 *   succeeded import, 1 for a failed one;
 * - a chunked upload past 50 MB is answered 413 too_large (counted as it arrives, never held).
 * The tests that import a real CSV need the readers and the writer (src/routes/imports/readers,
 * writer); the argument checks do not.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ImportedProject } from "../support/harness.ts";
import { runAdmin } from "./support/admin.ts";
import { json, send } from "./support/http.ts";
import { signalGroup, sleep, trackTempDir, waitForExit } from "./support/processes.ts";
import { type ServerInstance, startServer } from "./support/server.ts";
import { type Stack, startStack } from "./support/stack.ts";

let stack: Stack;
let second: ServerInstance;
let dir: string;

const env = { IMPORT_LEASE_SECONDS: "3", IMPORT_POLL_INTERVAL_MS: "100" };

beforeAll(async () => {
  stack = await startStack({ env });
  second = await startServer(stack.env);
  dir = mkdtempSync(join(tmpdir(), "fb-imports-"));
  trackTempDir(dir);
}, 120_000);
afterAll(async () => {
  await second?.stop().catch(() => {});
  await stack?.close();
});

/** A features.csv of `count` rows, each with a stable source id. */
function featuresCsv(count: number, prefix: string): string {
  const rows = ["title,description,status,author_email,source_id"];
  for (let i = 0; i < count; i++) rows.push(`${prefix} feature ${i},Imported row ${i},open,person${i % 500}@example.com,${prefix}-${i}`);
  return `${rows.join("\n")}\n`;
}

function multipart(fields: Record<string, string>, file: string): { body: Buffer; type: string } {
  const boundary = `----fb${Math.random().toString(36).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  parts.push(
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="features.csv"\r\nContent-Type: text/csv\r\n\r\n`),
  );
  parts.push(Buffer.from(file), Buffer.from(`\r\n--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${boundary}` };
}

async function post(server: ServerInstance, project: ImportedProject, file: string, fields: Record<string, string> = { source: "csv" }) {
  const { body, type } = multipart(fields, file);
  const result = await send(server.origin, {
    method: "POST",
    path: `/api/v3/projects/${project.slug}/admin/imports`,
    headers: { "X-API-Key": project.secretKey, "Content-Type": type },
    body,
    timeoutMs: 60_000,
  });
  expect(result.status, result.text).toBe(202);
  return json(result).data as { id: string };
}

async function importRow(id: string) {
  return stack.seeder.handle.db.selectFrom("imports").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

async function waitForEnd(id: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await importRow(id);
    if (row.status === "succeeded" || row.status === "failed") return row;
    if (Date.now() > deadline) throw new Error(`import ${id} still ${row.status}`);
    await sleep(100);
  }
}

async function featureCount(slug: string): Promise<number> {
  const row = await stack.seeder.handle.db
    .selectFrom("features")
    .innerJoin("projects", "projects.id", "features.project_id")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("projects.slug", "=", slug)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function completedEvents(slug: string) {
  return stack.seeder.handle.db
    .selectFrom("events")
    .innerJoin("projects", "projects.id", "events.project_id")
    .select("events.data")
    .where("projects.slug", "=", slug)
    .where("events.type", "=", "import.completed")
    .execute();
}

describe("the command line", () => {
  it("exits 2 on bad arguments, naming what is wrong", async () => {
    const project = await stack.seeder.importProject();
    const file = join(dir, "ok.csv");
    writeFileSync(file, featuresCsv(3, "cli"));
    const cases: Array<[string[], RegExp]> = [
      [["import-from", "trello", file, "--project", project.slug], /SOURCE must be one of/],
      [["import-from", "csv", file, "--project", "no-such-project"], /no project/],
      [["import-from", "csv", join(dir, "missing.csv"), "--project", project.slug], /cannot read/],
      [["import-from", "csv", file], /--project SLUG is required/],
      [["import-from", "csv", file, "--project", project.slug, "--status-map", "{bad"], /status-map/],
      [["import-from", "csv", file, "--project", project.slug, "--status-map", '{"x":"released"}'], /status_map\.x/],
      [["import-from", "csv", "--project", project.slug], /name the csv export FILE/],
    ];
    for (const [args, message] of cases) {
      const run = await runAdmin(args, stack.pg.url);
      expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stdout).toBe("");
    }
    const imports = await stack.seeder.handle.db.selectFrom("imports").select("id").execute();
    expect(imports).toHaveLength(0);
  }, 180_000);

  it("exits 0 with the succeeded ImportObject on stdout, 1 with the failed one", async () => {
    const project = await stack.seeder.importProject();
    const good = join(dir, "good.csv");
    writeFileSync(good, featuresCsv(5, "good"));
    const before = await featureCount(project.slug);
    const ok = await runAdmin(["import-from", "csv", good, "--project", project.slug], stack.pg.url, { redisUrl: stack.redis?.url });
    expect(ok.code, ok.stderr).toBe(0);
    // It runs the import it created under its own lease at once, not after that lease runs out.
    expect(ok.ms).toBeLessThan(60_000);
    const object = JSON.parse(ok.stdout);
    expect(object).toMatchObject({ source: "csv", status: "succeeded", dry_run: false, counts: { features: { created: 5 } } });
    expect(await featureCount(project.slug)).toBe(before + 5);
    const bad = join(dir, "bad.csv");
    writeFileSync(bad, "description\nno title column\n");
    const failed = await runAdmin(["import-from", "csv", bad, "--project", project.slug], stack.pg.url);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ status: "failed", error: { code: "validation_failed", field: "file" } });
  }, 180_000);
});

describe("two server processes", () => {
  it("run each import once: one attempt and one import.completed each", async () => {
    const projects = await Promise.all([1, 2, 3, 4].map(() => stack.seeder.importProject()));
    const jobs = await Promise.all(
      projects.map((project, i) => post(i % 2 ? second : stack.server, project, featuresCsv(50, `twice${i}`))),
    );
    for (const [i, job] of jobs.entries()) {
      const row = await waitForEnd(job.id);
      expect(row.status, JSON.stringify(row.error)).toBe("succeeded");
      expect(row.attempts).toBe(1);
      const project = projects[i]!;
      expect((await completedEvents(project.slug)).length).toBe(1);
    }
  }, 180_000);

  it("SIGKILL of the process running an import leaves the board as it was; another process completes it", async () => {
    // Only the first server runs imports until it is killed.
    await second.stop();
    second = await startServer({ ...stack.env, WEBHOOK_WORKER: "off" });
    const project = await stack.seeder.importProject();
    const before = await featureCount(project.slug);
    const job = await post(second, project, featuresCsv(30_000, "slow"));
    const deadline = Date.now() + 60_000;
    while ((await importRow(job.id)).status !== "running") {
      if (Date.now() > deadline) throw new Error("never claimed");
      await sleep(20);
    }
    await sleep(300);
    signalGroup(stack.server.child, "SIGKILL");
    await waitForExit(stack.server.child, 10_000);
    expect(await featureCount(project.slug)).toBe(before);
    expect((await importRow(job.id)).status).toBe("running");
    const third = await startServer(stack.env);
    try {
      const row = await waitForEnd(job.id, 180_000);
      expect(row.status, JSON.stringify(row.error)).toBe("succeeded");
      expect(row.attempts).toBe(2);
      expect(await featureCount(project.slug)).toBe(before + 30_000);
      expect((await completedEvents(project.slug)).length).toBe(1);
    } finally {
      await third.stop();
    }
  }, 300_000);
});

describe("the upload limit over HTTP", () => {
  it("answers a chunked body past 50 MB with 413 too_large and keeps serving", async () => {
    // The second server: the SIGKILL test above stops the stack's own.
    const project = await stack.seeder.importProject();
    const chunk = Buffer.alloc(1024 * 1024, 97);
    const limit = 51 * 1024 * 1024;
    let sent = 0;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(`${second.origin}/api/v3/projects/${project.slug}/admin/imports`, {
        method: "POST",
        headers: { "X-API-Key": project.secretKey, "Content-Type": "multipart/form-data; boundary=x", "Transfer-Encoding": "chunked" },
      });
      request.on("response", (response) => {
        let body = "";
        response.setEncoding("utf8").on("data", (part: string) => (body += part));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      });
      // A server that answers 413 may close the connection while the client still writes:
      // that error is expected once a response came, and fails the test when none did.
      let answered = false;
      request.on("response", () => {
        answered = true;
      });
      request.on("error", (error) => (answered ? undefined : reject(error)));
      const pump = () => {
        while (sent < limit) {
          sent += chunk.length;
          if (!request.write(chunk)) return void request.once("drain", pump);
        }
        request.end();
      };
      pump();
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error.code).toBe("too_large");
    // The server is still serving.
    const health = await send(second.origin, { path: "/api/v3/health" });
    expect(health.status).toBe(200);
  }, 120_000);
});
