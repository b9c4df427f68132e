/**
 * The import job (imports-v3.md, "How an import runs"): the claim under a lease (one runner at a
 * time, again once the lease has run out, at most three attempts, a project's imports in order
 * of creation), a Canny fetch that never stored its file, and `import.completed` (one per
 * non-dry-run import, in GET /events and delivered to a webhook).
 *
 * The tests under "with the readers and the writer" read and write a real CSV export: they pass
 * once src/routes/imports/readers and writer are merged (the placeholders there throw).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebhookWorker } from "../src/events/webhook-worker.ts";
import { claimImport, generateLeaseToken, insertImport, runImportJob } from "../src/routes/imports/index.ts";
import { allEvents } from "./support/events.fixture.ts";
import { createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";
import { importContentProject, owner } from "./support/owner-content.fixture.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver.ts";

let ctx: TestContext;
let receiver: WebhookReceiver;
let worker: WebhookWorker;

beforeAll(async () => {
  ctx = await createTestContext({
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    WEBHOOK_POLL_INTERVAL_MS: "50",
    IMPORT_LEASE_SECONDS: "2",
    IMPORT_POLL_INTERVAL_MS: "50",
  });
  receiver = await startWebhookReceiver();
  worker = new WebhookWorker({ db: ctx.db, config: ctx.deps.config, logger: ctx.deps.logger });
  await worker.start();
});
afterAll(async () => {
  await worker.stop(100);
  await receiver.close();
  await ctx.close();
});

const jobDeps = () => ({ ...ctx.deps, liveProgress: new Map() });
/** The lease every job of this file is created under unless a test names its own. */
const held = generateLeaseToken();
/** Runs job `id` as the command line does, under the lease it was created with. */
const run = (id: string) => runImportJob(jobDeps(), id, undefined, held);
const options = { boards: "roadmap" as const, status_map: {} };
const csvFile = (text: string) => ({ name: "features.csv", bytes: new TextEncoder().encode(text) });

async function projectId(project: ImportedProject): Promise<number> {
  const row = await ctx.db.selectFrom("projects").select("id").where("slug", "=", project.slug).executeTakeFirstOrThrow();
  return row.id;
}

/**
 * A new import of `project`, held under lease `token` (default `held`) for a minute, so that a
 * runner of another test file sharing the database cannot take it first.
 */
async function queued(
  project: ImportedProject,
  extra: { dryRun?: boolean; file?: { name: string; bytes: Uint8Array } | null; token?: string } = {},
) {
  return insertImport(ctx.db, {
    lease: { token: extra.token ?? held, seconds: 60 },
    projectId: await projectId(project),
    source: "csv",
    dryRun: extra.dryRun ?? false,
    options,
    file: extra.file === undefined ? csvFile("title\nDark mode\n") : extra.file,
  });
}

describe("the claim", () => {
  it("one runner holds a job under its lease; another gets it only after the lease ran out, as a new attempt", async () => {
    const project = await importContentProject(ctx);
    const mine = generateLeaseToken();
    const job = await queued(project, { token: mine });
    const first = await claimImport(ctx.db, mine, 2, job.id);
    expect(first).toMatchObject({ id: job.id, status: "running", attempts: 1 });
    expect(await claimImport(ctx.db, generateLeaseToken(), 2, job.id)).toBeUndefined();
    await ctx.db
      .updateTable("imports")
      .set({ lease_until: new Date(Date.now() - 1000) })
      .where("id", "=", job.id)
      .execute();
    const second = await claimImport(ctx.db, generateLeaseToken(), 2, job.id);
    expect(second).toMatchObject({ id: job.id, attempts: 2 });
  });

  it("claims a project's imports one at a time, in order of creation", async () => {
    const project = await importContentProject(ctx);
    const token = generateLeaseToken();
    const older = await queued(project, { token });
    const newer = await queued(project, { token });
    // The creator's own lease lets it claim, but not the newer one while the older is unfinished.
    expect(await claimImport(ctx.db, token, 30, newer.id)).toBeUndefined();
    expect(await claimImport(ctx.db, token, 30, older.id)).toMatchObject({ id: older.id });
    // The older one running: still not the newer one.
    expect(await claimImport(ctx.db, token, 30, newer.id)).toBeUndefined();
    await ctx.db
      .updateTable("imports")
      .set({ status: "failed", lease_owner: null, lease_until: null })
      .where("id", "=", older.id)
      .execute();
    expect(await claimImport(ctx.db, token, 30, newer.id)).toMatchObject({ id: newer.id });
  });

  it("a job stopped three times is failed on its next claim, with one import.completed", async () => {
    const project = await importContentProject(ctx);
    const job = await queued(project);
    await ctx.db
      .updateTable("imports")
      .set({ attempts: 3, status: "running", lease_owner: "gone", lease_until: new Date(Date.now() - 1000) })
      .where("id", "=", job.id)
      .execute();
    const ended = await run(job.id);
    expect(ended).toMatchObject({ status: "failed", attempts: 4 });
    expect(ended.error).toMatchObject({ code: "internal" });
    expect(ended.error?.message).toMatch(/3 times/);
    expect(ended.finished_at).not.toBeNull();
    const file = await ctx.db.selectFrom("import_files").select("import_id").where("import_id", "=", job.id).executeTakeFirst();
    expect(file).toBeUndefined();
    const events = await allEvents(ctx, project, 1, "type=import.completed");
    expect(events).toHaveLength(1);
    expect(events[0].data.object).toMatchObject({ id: job.id, status: "failed", error: { code: "internal" } });
  });

  it("a Canny import whose export was never stored (the receiving process died) fails saying to send it again", async () => {
    const project = await importContentProject(ctx);
    const job = await queued(project, { file: null });
    const ended = await run(job.id);
    expect(ended.status).toBe("failed");
    expect(ended.error?.message).toMatch(/send the request again/);
    const got = await owner(ctx, project, "GET", `/imports/${job.id}`);
    expect(got.body.data).toMatchObject({ status: "failed", error: { field: "api_key" } });
  });

  it("a failed dry run records no event", async () => {
    const project = await importContentProject(ctx);
    const job = await queued(project, { dryRun: true, file: null });
    expect((await run(job.id)).status).toBe("failed");
    const stored = await ctx.db
      .selectFrom("events")
      .select("data")
      .where("type", "=", "import.completed")
      .where("project_id", "=", await projectId(project))
      .execute();
    const dryEvent = stored.filter((event) => (event.data.object as { id?: string }).id === job.id);
    expect(dryEvent).toHaveLength(0);
  });
  it("import.completed is delivered to a webhook receiver", async () => {
    const project = await importContentProject(ctx);
    const hook = await owner(ctx, project, "POST", "/webhooks", {
      url: `${receiver.url}/imports-${project.slug}`,
      events: ["import.completed"],
    });
    expect(hook.status).toBe(201);
    // A failed import records its event too (one that needs no reader or writer: its export never arrived).
    const ended = await run((await queued(project, { file: null })).id);
    await receiver.waitFor((received) => received.some((r) => r.path === `/imports-${project.slug}`), 10_000);
    const delivered = receiver.on(`/imports-${project.slug}`);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]?.payload).toMatchObject({ type: "import.completed", data: { object: { id: ended.id, status: "failed" } } });
  });
});

describe("with the readers and the writer", () => {
  const features = `title,description,status,author_email,source_id\nDark mode,Please,planned,ann@example.com,f1\nExport,CSV please,open,bob@example.com,f2\n`;

  async function featureCount(project: ImportedProject): Promise<number> {
    const list = await owner(ctx, project, "GET", "/features?per_page=1");
    return list.body.meta.total;
  }

  it("a dry run writes nothing and reports the counts the real run then reports", async () => {
    const project = await importContentProject(ctx);
    const before = await featureCount(project);
    const dry = await run((await queued(project, { dryRun: true, file: csvFile(features) })).id);
    expect(dry.status, JSON.stringify(dry.error)).toBe("succeeded");
    expect(await featureCount(project)).toBe(before);
    const real = await run((await queued(project, { file: csvFile(features) })).id);
    expect(real.status).toBe("succeeded");
    expect(real.counts).toEqual(dry.counts);
    expect(real.counts?.features?.created).toBe(2);
    expect(await featureCount(project)).toBe(before + 2);
    // One import.completed, for the real run only; and the public board shows the features at once.
    const events = await allEvents(ctx, project, 1, "type=import.completed");
    expect(events).toHaveLength(1);
    expect(events[0].data.object).toMatchObject({ id: real.id, status: "succeeded", dry_run: false });
    const pub = await ctx.get(`/api/v3/projects/${project.slug}/features?per_page=100&status=planned`, project.secretKey);
    expect(JSON.stringify(await pub.json())).toContain("Dark mode");
  });

  it("a bad file fails with validation_failed naming file, and writes nothing", async () => {
    const project = await importContentProject(ctx);
    const before = await featureCount(project);
    const ended = await run((await queued(project, { file: csvFile("description\nno title column\n") })).id);
    expect(ended.status).toBe("failed");
    expect(ended.error).toMatchObject({ code: "validation_failed", field: "file" });
    expect(await featureCount(project)).toBe(before);
  });
});
