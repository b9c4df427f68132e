/**
 * The owner's import routes (imports-v3.md, "Routes"): the 202 ImportObject, 422 naming each
 * form field, the 50 MB limit of POST /imports (413 too_large above, one megabyte elsewhere),
 * Idempotency-Key replays, secret key only, the list's paging and 404. These need no reader or
 * writer: the job's own behaviour is in imports.job.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";
import { expectInvalid, importContentProject, owner } from "./support/owner-content.fixture.ts";

let ctx: TestContext;
let p: ImportedProject;
let other: ImportedProject;

beforeAll(async () => {
  // No runner here (the routes are tested in process): the jobs stay queued.
  // Canny's API at an address the guard refuses: a JSON-form import fails without leaving the machine.
  ctx = await createTestContext({ CANNY_API_URL: "http://127.0.0.1:9/api" });
  p = await importContentProject(ctx);
  other = await importContentProject(ctx);
});
afterAll(async () => {
  await ctx.close();
});

const path = (project: ImportedProject, rest = "") => `/api/v3/projects/${project.slug}/admin/imports${rest}`;
const csv = "title,description\nDark mode,Please\n";

function form(fields: Record<string, string>, file: string | Uint8Array | null = csv, fileName = "features.csv"): FormData {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) data.set(name, value);
  if (file !== null) data.set("file", new Blob([typeof file === "string" ? file : Buffer.from(file)]), fileName);
  return data;
}

async function upload(
  project: ImportedProject,
  body: FormData | string | ReadableStream,
  headers: Record<string, string> = {},
  key = project.secretKey,
) {
  const response = await ctx.app.request(path(project), {
    method: "POST",
    headers: { "X-API-Key": key, ...headers },
    body,
    // A stream body needs it (undici); harmless otherwise.
    ...(body instanceof ReadableStream ? { duplex: "half" } : {}),
  } as RequestInit);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

describe("POST /admin/imports", () => {
  it("queues an import (202 ImportObject exactly as the contract lists it)", async () => {
    const result = await upload(p, form({ source: "csv", dry_run: "true", boards: "custom", status_map: '{"Complete":"done"}' }));
    expect(result.status, JSON.stringify(result.body)).toBe(202);
    const zero = { created: 0, updated: 0, skipped: 0 };
    expect(result.body.data).toEqual({
      id: expect.stringMatching(/^imp_[A-Za-z0-9_-]{22}$/),
      source: "csv",
      dry_run: true,
      status: "queued",
      options: { boards: "custom", status_map: { Complete: "done" } },
      progress: { done: 0, total: null },
      counts: Object.fromEntries(
        ["boards", "tags", "voters", "features", "votes", "comments", "releases", "merges", "subscriptions"].map((k) => [k, zero]),
      ),
      warnings: [],
      warning_count: 0,
      error: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      started_at: null,
      finished_at: null,
    });
    const stored = await ctx.db
      .selectFrom("import_files")
      .select(["bytes", "file_name"])
      .where("import_id", "=", result.body.data.id)
      .executeTakeFirstOrThrow();
    expect(Buffer.from(stored.bytes).toString("utf8")).toBe(csv);
    expect(stored.file_name).toBe("features.csv");
  });

  it("defaults dry_run false, boards roadmap, status_map {}", async () => {
    const result = await upload(p, form({ source: "fider" }));
    expect(result.status).toBe(202);
    expect(result.body.data).toMatchObject({ source: "fider", dry_run: false, options: { boards: "roadmap", status_map: {} } });
  });

  it.each([
    ["source", { source: "trello" }, csv],
    ["source", {}, csv],
    ["file", { source: "csv" }, null],
    ["dry_run", { source: "csv", dry_run: "yes" }, csv],
    ["boards", { source: "csv", boards: "kanban" }, csv],
    ["status_map", { source: "csv", status_map: "{not json" }, csv],
    ["status_map", { source: "csv", status_map: "[]" }, csv],
    ["status_map.Doing", { source: "csv", status_map: '{"Doing":"in_progress","Doing":"busy"}' }, csv],
  ] as const)("422 naming %s and nothing stored", async (field, fields, file) => {
    const before = await ctx.db
      .selectFrom("imports")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .executeTakeFirstOrThrow();
    expectInvalid(await upload(p, form(fields as Record<string, string>, file)), field);
    const after = await ctx.db
      .selectFrom("imports")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });

  it("422 naming status_map.<key> for a status that is not one of the six", async () => {
    expectInvalid(await upload(p, form({ source: "csv", status_map: '{"Shipped":"released"}' })), "status_map.Shipped");
  });

  it("JSON form: Canny's API only; 422 naming api_key, source, boards, dry_run", async () => {
    const send = (body: unknown) => owner(ctx, p, "POST", "/imports", body);
    expectInvalid(await send({ source: "canny" }), "api_key");
    expectInvalid(await send({ source: "canny", api_key: "" }), "api_key");
    expectInvalid(await send({ source: "csv", api_key: "k" }), "source");
    expectInvalid(await send({ source: "canny", api_key: "k", boards: "x" }), "boards");
    expectInvalid(await send({ source: "canny", api_key: "k", dry_run: "maybe" }), "dry_run");
    expectInvalid(await send({ source: "canny", api_key: "k", status_map: { open: "nope" } }), "status_map.open");
  });

  it("JSON form: 202 queued, and the key is stored nowhere", async () => {
    const key = "canny-secret-key-never-stored-0123456789";
    const result = await owner(ctx, p, "POST", "/imports", { source: "canny", api_key: key, dry_run: true });
    expect(result.status, JSON.stringify(result.body)).toBe(202);
    expect(result.body.data).toMatchObject({ source: "canny", dry_run: true, status: "queued" });
    expect(JSON.stringify(result.body)).not.toContain(key);
    const row = await ctx.db.selectFrom("imports").selectAll().where("id", "=", result.body.data.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(key);
    // The fetch after the answer fails (the address is refused): the job ends failed naming api_key.
    let ended = row;
    for (let i = 0; i < 100 && ended.status === "queued"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      ended = await ctx.db.selectFrom("imports").selectAll().where("id", "=", row.id).executeTakeFirstOrThrow();
    }
    expect(ended).toMatchObject({ status: "failed", error: { code: "validation_failed", field: "api_key" } });
    expect(JSON.stringify(ended)).not.toContain(key);
    const file = await ctx.db.selectFrom("import_files").select("import_id").where("import_id", "=", row.id).executeTakeFirst();
    expect(file).toBeUndefined();
  });

  it("413 too_large above 50 MB on this route, refused without reading the body", async () => {
    let pulled = 0;
    const size = 51 * 1024 * 1024;
    const chunk = new Uint8Array(1024 * 1024);
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= size) return controller.close();
        pulled += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const result = await upload(p, stream, { "Content-Type": "multipart/form-data; boundary=x", "Content-Length": String(size) });
    expect(result.status).toBe(413);
    expect(result.body.error.code).toBe("too_large");
    expect(pulled).toBeLessThan(size);
  });

  it("takes a body over one megabyte on this route (up to 50 MB)", async () => {
    const big = new Uint8Array(3 * 1024 * 1024).fill(65);
    const result = await upload(p, form({ source: "csv" }, big));
    expect(result.status, JSON.stringify(result.body)).toBe(202);
  });

  it("keeps the one-megabyte limit on every other route", async () => {
    const result = await owner(ctx, p, "POST", "/tags", { name: "x".repeat(1024 * 1024 + 10) });
    expect(result.status).toBe(413);
    expect(result.body.error.code).toBe("too_large");
  });

  it("Idempotency-Key: the same upload replays the same import; another file with the key is 409", async () => {
    const key = `imp-${Math.random()}`;
    const body = () => form({ source: "csv" }, "title\nSame file\n");
    const first = await upload(p, body(), { "Idempotency-Key": key });
    const again = await upload(p, body(), { "Idempotency-Key": key });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    expect(again.body.data.id).toBe(first.body.data.id);
    const imports = await ctx.db.selectFrom("imports").select("id").where("id", "=", first.body.data.id).execute();
    expect(imports).toHaveLength(1);
    const other = await upload(p, form({ source: "csv" }, "title\nAnother file\n"), { "Idempotency-Key": key });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("idempotency_mismatch");
  });

  it("secret key only: the embed key is 403 not_allowed, another project's key 403 key_wrong_project, none 401", async () => {
    expect((await upload(p, form({ source: "csv" }), {}, p.embedKey)).body.error.code).toBe("not_allowed");
    expect((await upload(p, form({ source: "csv" }), {}, other.secretKey)).body.error.code).toBe("key_wrong_project");
    const none = await ctx.app.request(path(p), { method: "POST", body: form({ source: "csv" }) });
    expect(none.status).toBe(401);
    const read = await ctx.get(path(p), p.embedKey);
    expect(read.status).toBe(403);
  });
});

describe("GET /admin/imports", () => {
  it("lists the project's imports newest first with meta, paged", async () => {
    const project = await importContentProject(ctx);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await upload(project, form({ source: "csv" }))).body.data.id);
    const list = await owner(ctx, project, "GET", "/imports");
    expect(list.status).toBe(200);
    expect(list.body.data.map((i: { id: string }) => i.id)).toEqual([...ids].reverse());
    expect(list.body.meta).toEqual({ page: 1, per_page: 20, total: 3, total_pages: 1, has_more: false });
    const second = await owner(ctx, project, "GET", "/imports?per_page=2&page=2");
    expect(second.body.data.map((i: { id: string }) => i.id)).toEqual([ids[0]]);
    expect(second.body.meta).toMatchObject({ page: 2, per_page: 2, total: 3, has_more: false });
    expect(list.headers.get("cache-control")).toBe("private, max-age=0");
  });

  it("GET /imports/{id}: the import; 404 not_found for an unknown id or another project's import", async () => {
    const created = await upload(p, form({ source: "csv" }));
    const got = await owner(ctx, p, "GET", `/imports/${created.body.data.id}`);
    expect(got.status).toBe(200);
    // A runner of another test file sharing the database may have claimed it since: compare what stays.
    const { id, source, dry_run, options, created_at } = created.body.data;
    expect(got.body.data).toMatchObject({ id, source, dry_run, options, created_at });
    expect((await owner(ctx, p, "GET", "/imports/imp_nope")).body.error.code).toBe("not_found");
    expect((await owner(ctx, other, "GET", `/imports/${created.body.data.id}`)).status).toBe(404);
  });
});
