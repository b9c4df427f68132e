/**
 * The import job's own rules (imports-v3.md, "How an import runs" rules 2, 3, 6, 7), with
 * reading and writing steps of the test's own (ImportJobDeps.steps), so they hold whatever the
 * readers and the writer map: the writes commit in one transaction with the job's end and its
 * one `import.completed`; a dry run rolls them back and reports the same counts; a file the
 * reader refuses, or one over 200,000 records, fails naming `file` with nothing written; an
 * unexpected error is retried, at most three attempts; after the commit the public board shows
 * the import at once; progress is visible while the job runs (on Postgres: the embedded
 * database's one connection is the job's until it commits).
 */
import type { Transaction } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../db/schema.ts";
import { type ImportData, ImportFileError } from "../src/routes/imports/import-data.ts";
import { generateLeaseToken, insertImport, runImportJob } from "../src/routes/imports/index.ts";
import { allEvents } from "./support/events.fixture.ts";
import { createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";
import { importContentProject, owner, publicRead } from "./support/owner-content.fixture.ts";

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ IMPORT_LEASE_SECONDS: "5", IMPORT_POLL_INTERVAL_MS: "50" });
});
afterAll(async () => {
  await ctx.close();
});

const zero = { created: 0, updated: 0, skipped: 0 };
const emptyCounts = () =>
  Object.fromEntries(
    ["boards", "tags", "voters", "features", "votes", "comments", "releases", "merges", "subscriptions"].map((k) => [k, { ...zero }]),
  ) as Record<string, typeof zero>;

function data(tags: string[], votes = 0): ImportData {
  return {
    source: "csv",
    people: [],
    boards: [],
    tags: tags.map((name, i) => ({ sourceId: `t${i}`, name, color: null, path: `features.csv:${i + 2}` })),
    features: [],
    votes: Array.from({ length: votes }, (_, i) => ({
      featureSourceId: "f",
      personSourceId: `p${i}`,
      createdAt: null,
      path: `votes.csv:${i}`,
    })),
    comments: [],
    releases: [],
    subscriptions: [],
    warnings: [{ path: "features.csv:9", message: "no title: row skipped" }],
    skipped: { features: 1 },
  };
}

/** A writer that creates the tags of `data` in the job's transaction. */
async function writeTags(
  trx: Transaction<Database>,
  input: { projectId: number; data: ImportData; onProgress?: (done: number, total: number) => void },
) {
  const counts = emptyCounts();
  for (const [i, tag] of input.data.tags.entries()) {
    await trx.insertInto("tags").values({ project_id: input.projectId, name: tag.name }).execute();
    counts.tags!.created += 1;
    input.onProgress?.(i + 1, input.data.tags.length);
  }
  counts.features!.skipped = 1;
  return { counts: counts as never, warnings: input.data.warnings, warningCount: input.data.warnings.length };
}

const steps = (read: () => Promise<ImportData>, write = writeTags) => ({
  ...ctx.deps,
  steps: { read: async () => read(), write: write as never },
});

/** The lease every job here is created and run under: no runner of another test file takes them. */
const held = generateLeaseToken();

async function newJob(project: ImportedProject, dryRun = false) {
  const row = await ctx.db.selectFrom("projects").select("id").where("slug", "=", project.slug).executeTakeFirstOrThrow();
  return insertImport(ctx.db, {
    projectId: row.id,
    source: "csv",
    dryRun,
    options: { boards: "roadmap", status_map: {} },
    file: { name: "features.csv", bytes: new TextEncoder().encode("title\nx\n") },
    lease: { token: held, seconds: 60 },
  });
}

const tagNames = async (project: ImportedProject): Promise<string[]> =>
  (await owner(ctx, project, "GET", "/tags?per_page=100")).body.data.map((t: { name: string }) => t.name);

describe("the import job", () => {
  it("commits the writes with succeeded and one import.completed; the public board shows them at once", async () => {
    const project = await importContentProject(ctx);
    const before = await publicRead(ctx, project); // warm the cached board document
    expect(JSON.stringify(before.data.tags)).not.toContain("Imported tag");
    const ended = await runImportJob(
      steps(async () => data(["Imported tag A", "Imported tag B"])),
      (await newJob(project)).id,
      undefined,
      held,
    );
    expect(ended).toMatchObject({ status: "succeeded", attempts: 1, error: null, warning_count: 1 });
    expect(ended.counts?.tags).toEqual({ created: 2, updated: 0, skipped: 0 });
    expect(ended.progress_done).toBe(ended.progress_total);
    expect(await tagNames(project)).toEqual(expect.arrayContaining(["Imported tag A", "Imported tag B"]));
    const after = await publicRead(ctx, project);
    expect(after.data.tags.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(["Imported tag A", "Imported tag B"]));
    const events = await allEvents(ctx, project, 1, "type=import.completed");
    expect(events).toHaveLength(1);
    const got = await owner(ctx, project, "GET", `/imports/${ended.id}`);
    expect(events[0].data.object).toEqual(got.body.data);
    expect(got.body.data).toMatchObject({ status: "succeeded", warnings: [{ path: "features.csv:9", message: "no title: row skipped" }] });
  });

  it("a dry run writes nothing, reports the counts the real run reports, and records no event", async () => {
    const project = await importContentProject(ctx);
    const read = async () => data(["Dry tag"]);
    const dry = await runImportJob(steps(read), (await newJob(project, true)).id, undefined, held);
    expect(dry.status).toBe("succeeded");
    expect(await tagNames(project)).not.toContain("Dry tag");
    expect(await allEvents(ctx, project, 0, "type=import.completed")).toHaveLength(0);
    const real = await runImportJob(steps(read), (await newJob(project)).id, undefined, held);
    expect(real.counts).toEqual(dry.counts);
    expect(real.warning_count).toBe(dry.warning_count);
    expect(await tagNames(project)).toContain("Dry tag");
  });

  it("a file the reader refuses fails with validation_failed naming file; nothing written", async () => {
    const project = await importContentProject(ctx);
    const ended = await runImportJob(
      steps(async () => {
        throw new ImportFileError("features.csv: no title column");
      }),
      (await newJob(project)).id,
      undefined,
      held,
    );
    expect(ended).toMatchObject({ status: "failed", attempts: 1, error: { code: "validation_failed", field: "file" } });
    expect(ended.error?.message).toContain("no title column");
    const events = await allEvents(ctx, project, 1, "type=import.completed");
    expect(events).toHaveLength(1);
    expect(events[0].data.object).toMatchObject({ status: "failed" });
  });

  it("over 200,000 records fails naming file, before anything is written", async () => {
    const project = await importContentProject(ctx);
    const ended = await runImportJob(
      steps(async () => data(["Too many"], 200_000)),
      (await newJob(project)).id,
      undefined,
      held,
    );
    expect(ended).toMatchObject({ status: "failed", error: { code: "validation_failed", field: "file" } });
    expect(await tagNames(project)).not.toContain("Too many");
  });

  it("an unexpected error is tried three times, then failed; what the attempts wrote is rolled back", async () => {
    const project = await importContentProject(ctx);
    let attempts = 0;
    const failing = async (trx: Transaction<Database>, input: Parameters<typeof writeTags>[1]) => {
      attempts += 1;
      await writeTags(trx, input);
      throw new Error("writer broke");
    };
    const ended = await runImportJob(
      steps(async () => data(["Half written"]), failing as never),
      (await newJob(project)).id,
      undefined,
      held,
    );
    expect(attempts).toBe(3);
    expect(ended).toMatchObject({ status: "failed", attempts: 3, error: { code: "internal" } });
    expect(ended.error?.message).toMatch(/3 times.*writer broke/);
    expect(await tagNames(project)).not.toContain("Half written");
  });

  it.skipIf(!process.env.DATABASE_URL)("shows progress while it runs, and the board unchanged until it commits", async () => {
    const project = await importContentProject(ctx);
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = async (trx: Transaction<Database>, input: Parameters<typeof writeTags>[1]) => {
      const result = await writeTags(trx, input);
      await gate;
      return result;
    };
    const job = await newJob(project);
    const running = runImportJob(
      steps(async () => data(["P1", "P2", "P3"]), slow as never),
      job.id,
      undefined,
      held,
    );
    let seen: { status: string; progress: { done: number; total: number | null } } | undefined;
    for (let i = 0; i < 100; i++) {
      seen = (await owner(ctx, project, "GET", `/imports/${job.id}`)).body.data;
      if (seen?.progress.done === 3) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(seen).toMatchObject({ status: "running", progress: { done: 3, total: 3 } });
    expect(await tagNames(project)).not.toContain("P1");
    release();
    expect((await running).status).toBe("succeeded");
    expect(await tagNames(project)).toContain("P1");
  });
});
