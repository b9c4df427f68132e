/**
 * Writes scripts/demo/demo-database.tar.gz and demo-database.json: a PGlite data directory with
 * every migration applied and the demo snapshot (demo-snapshot.json) imported, which a first
 * `npm start` on the embedded default loads instead of running initdb and the import
 * (src/admin/demo-database.ts). Run it after changing the demo, a migration or the PGlite
 * version; `npm test` fails while it is stale (test/demo-database.test.ts).
 *
 *   npx tsx scripts/demo/prepare-demo-database.ts          # rewrite both files (~30-60 s)
 *   npx tsx scripts/demo/prepare-demo-database.ts --check  # exit 1 when they are stale
 *
 * The tarball is not byte-for-byte reproducible (transaction ids, timestamps); the manifest
 * records what it was made from.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { migrateToLatest, openDatabase } from "../../db/connect.ts";
import { loadDemoSnapshot } from "../../src/admin/demo.ts";
import { snapshotCounts } from "../../src/admin/demo-bootstrap.ts";
import {
  currentDemoDatabaseSources,
  DEMO_DATABASE_FILE,
  DEMO_DATABASE_MANIFEST_FILE,
  type DemoDatabaseManifest,
  demoDatabaseStaleness,
} from "../../src/admin/demo-database.ts";
import { importSnapshot } from "../../src/admin/snapshot-import.ts";

async function prepare(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "fb-demo-database-"));
  try {
    const sources = currentDemoDatabaseSources();
    const snapshot = loadDemoSnapshot();
    const handle = await openDatabase({ PGLITE_DIR: dir });
    await migrateToLatest(handle.db);
    await importSnapshot(handle.db, snapshot, {});
    // Compact tables and give the planner statistics; then switch to a fresh WAL segment and
    // checkpoint so that the old segments (initdb's and the import's records, 2+ MB gzipped)
    // are removed and the one left is nearly empty.
    await sql`VACUUM (FULL, ANALYZE)`.execute(handle.db);
    await sql`SET wal_recycle = off`.execute(handle.db);
    for (let i = 0; i < 3; i++) {
      await sql`SELECT pg_switch_wal()`.execute(handle.db);
      await sql`CHECKPOINT`.execute(handle.db);
    }
    await handle.close();
    // dumpDataDir is PGlite's own format (what loadDataDir reads): reopen the directory to get it.
    const { PGlite } = await import("@electric-sql/pglite");
    const { pg_trgm } = await import("@electric-sql/pglite/contrib/pg_trgm");
    const { fuzzystrmatch } = await import("@electric-sql/pglite/contrib/fuzzystrmatch");
    const { btree_gin } = await import("@electric-sql/pglite/contrib/btree_gin");
    const pglite = await PGlite.create({ dataDir: dir, extensions: { pg_trgm, fuzzystrmatch, btree_gin } });
    const tarball = await pglite.dumpDataDir("gzip");
    await pglite.close();
    writeFileSync(DEMO_DATABASE_FILE, Buffer.from(await tarball.arrayBuffer()));
    const manifest: DemoDatabaseManifest = { ...sources, counts: snapshotCounts(snapshot) };
    writeFileSync(DEMO_DATABASE_MANIFEST_FILE, `${JSON.stringify(manifest, null, 2)}\n`);
    console.log(`wrote ${DEMO_DATABASE_FILE.pathname} (${(tarball.size / 1e6).toFixed(1)} MB) and its manifest`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes("--check")) {
  const manifest = JSON.parse(readFileSync(DEMO_DATABASE_MANIFEST_FILE, "utf8")) as DemoDatabaseManifest;
  const reasons = demoDatabaseStaleness(manifest, currentDemoDatabaseSources());
  if (reasons.length > 0) {
    console.error(`the prepared demo database is stale (${reasons.join("; ")}): run npx tsx scripts/demo/prepare-demo-database.ts`);
    process.exitCode = 1;
  }
} else {
  await prepare();
}
