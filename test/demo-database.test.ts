/**
 * The prepared demo database (scripts/demo/demo-database.tar.gz, src/admin/demo-database.ts):
 * a first start on the embedded default loads it instead of running initdb and the demo import
 * (docs/operations.md, "First start and the demo database"). It must hold exactly the current demo
 * under the current schema, be used
 * only for a new database, and be refused once stale.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Migrator, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, openDatabase, pgliteDatabaseExists } from "../db/connect.ts";
import { migrations } from "../db/migrations/index.ts";
import { DEMO_SLUG, loadDemoSnapshot } from "../src/admin/demo.ts";
import { snapshotCounts } from "../src/admin/demo-bootstrap.ts";
import { currentDemoDatabaseSources, demoDatabaseStaleness, preparedDemoDatabase } from "../src/admin/demo-database.ts";
import { exportSnapshot, portableSnapshot } from "../src/admin/snapshot-export.ts";
import { importSnapshot } from "../src/admin/snapshot-import.ts";
import { createTestContext, demoSnapshotForTest, type TestContext } from "./support/harness.ts";

const prepared = preparedDemoDatabase();
const dir = mkdtempSync(join(tmpdir(), "fb-demo-database-test-"));
let handle: DatabaseHandle;
let ctx: TestContext;

beforeAll(async () => {
  if (!prepared.usable) throw new Error(`prepared demo database unusable: ${prepared.reasons.join("; ")}`);
  handle = await openDatabase({ PGLITE_DIR: join(dir, "data"), initialDataDir: prepared.tarball });
  ctx = await createTestContext();
}, 120_000);
afterAll(async () => {
  await handle?.close();
  await ctx?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A project's export with what differs between two imports of the demo set aside: the slug, the
 * anonymous tokens, and the database ids inside generated refs ("column-510"), which are renamed
 * by order of first appearance ("column#1"); both exports list rows in the same order.
 */
function comparable(doc: ReturnType<typeof portableSnapshot>): unknown {
  const renamed = new Map<string, string>();
  const perKind = new Map<string, number>();
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node && typeof node === "object") return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, walk(value)]));
    if (typeof node !== "string") return node;
    const generated = /^([a-z][a-z_]*)-(\d+)$/.exec(node);
    if (!generated) return node;
    if (!renamed.has(node)) {
      const n = (perKind.get(generated[1]!) ?? 0) + 1;
      perKind.set(generated[1]!, n);
      renamed.set(node, `${generated[1]}#${n}`);
    }
    return renamed.get(node);
  };
  return walk({
    ...doc,
    project: { ...doc.project, slug: "<slug>" },
    voters: doc.voters.map((voter) => ({ ...voter, anon_token: null })),
  });
}

describe("prepared demo database", () => {
  it("was made from this checkout's migrations, demo-snapshot.json and PGlite version", () => {
    expect(prepared.usable && demoDatabaseStaleness(prepared.manifest, currentDemoDatabaseSources())).toEqual([]);
    expect(prepared.usable && prepared.manifest.counts).toEqual(snapshotCounts(loadDemoSnapshot()));
  });

  it("creates a new database that holds every migration and exactly the demo project", async () => {
    expect(handle.created).toBe(true);
    const applied = await new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations } }).getMigrations();
    expect(applied.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name)).toEqual([]);
    const projects = await handle.db.selectFrom("projects").select("slug").execute();
    expect(projects).toEqual([{ slug: DEMO_SLUG }]);
    // The same demo imported into the test database exports identically.
    const demo = demoSnapshotForTest();
    await importSnapshot(ctx.db, demo.snapshot, {});
    // Without the restore fields (ids, voter_ids, key and token digests), which name each database's own rows.
    const portable = async (db: typeof ctx.db, slug: string) => comparable(portableSnapshot(await exportSnapshot(db, slug)));
    expect(await portable(handle.db, DEMO_SLUG)).toEqual(await portable(ctx.db, demo.slug));
  }, 120_000);

  it("is not loaded over an existing database: reopening keeps what was written", async () => {
    await sql`UPDATE projects SET name = 'Lumen (edited)' WHERE slug = ${DEMO_SLUG}`.execute(handle.db);
    await handle.close();
    expect(pgliteDatabaseExists(join(dir, "data"))).toBe(true);
    handle = await openDatabase({ PGLITE_DIR: join(dir, "data"), initialDataDir: prepared.usable ? prepared.tarball : undefined });
    expect(handle.created).toBe(false);
    expect(await handle.db.selectFrom("projects").select("name").execute()).toEqual([{ name: "Lumen (edited)" }]);
  }, 120_000);

  it("is refused when the PGlite version, the migrations or the demo differ", () => {
    const current = currentDemoDatabaseSources();
    expect(demoDatabaseStaleness(current, current)).toEqual([]);
    expect(demoDatabaseStaleness({ ...current, pglite: "0.0.1" }, current)).toEqual([
      `made with PGlite 0.0.1, installed ${current.pglite}`,
    ]);
    expect(demoDatabaseStaleness({ ...current, migrations: current.migrations.slice(0, -1) }, current)).toEqual([
      "the migrations changed since it was made",
    ]);
    expect(demoDatabaseStaleness({ ...current, snapshot_sha256: "0".repeat(64) }, current)).toEqual([
      "demo-snapshot.json changed since it was made",
    ]);
  });

  it("memory:// never holds a database yet; a directory does once PG_VERSION exists", () => {
    expect(pgliteDatabaseExists("memory://")).toBe(false);
    expect(pgliteDatabaseExists(join(dir, "nowhere"))).toBe(false);
  });
});
