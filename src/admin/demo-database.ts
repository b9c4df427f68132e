/**
 * The prepared demo database: scripts/demo/demo-database.tar.gz is a PGlite data directory that
 * already holds the migrated schema and the imported demo project (written by
 * scripts/demo/prepare-demo-database.ts, described by scripts/demo/demo-database.json). A first
 * `npm start` on the embedded default starts from it instead of running initdb and importing
 * the demo, which costs 20-40 s of CPU on a small machine (docs/operations.md,
 * "First start and the demo database").
 *
 * It is used only while it matches what it was made from: the installed PGlite version (its
 * data directory format), the migration list and the bytes of demo-snapshot.json. Otherwise the
 * server creates the database from scratch as before, and the tests report it stale.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { migrations } from "../../db/migrations/index.ts";

const DEMO_DIR = new URL("../../scripts/demo/", import.meta.url);
export const DEMO_DATABASE_FILE = new URL("demo-database.tar.gz", DEMO_DIR);
export const DEMO_DATABASE_MANIFEST_FILE = new URL("demo-database.json", DEMO_DIR);
const DEMO_SNAPSHOT_FILE = new URL("demo-snapshot.json", DEMO_DIR);

/** What the prepared database was made from, and what it holds (demo-database.json). */
export interface DemoDatabaseManifest {
  /** Version of @electric-sql/pglite that wrote the data directory. */
  pglite: string;
  /** Names of the migrations applied, in order. */
  migrations: string[];
  /** sha256 (hex) of scripts/demo/demo-snapshot.json as imported. */
  snapshot_sha256: string;
  /** Rows of the demo project by snapshot list (features, voters, votes...). */
  counts: Record<string, number>;
}

/** The installed @electric-sql/pglite version (its package.json is not exported: found by path). */
export function installedPgliteVersion(): string {
  const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite"); // <package>/dist/index.cjs
  return (JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8")) as { version: string }).version;
}

/** The manifest fields the current checkout would produce (counts aside). */
export function currentDemoDatabaseSources(): Omit<DemoDatabaseManifest, "counts"> {
  return {
    pglite: installedPgliteVersion(),
    migrations: Object.keys(migrations),
    snapshot_sha256: createHash("sha256").update(readFileSync(DEMO_SNAPSHOT_FILE)).digest("hex"),
  };
}

/**
 * Why `manifest` no longer matches `current` (one sentence per difference); empty when the
 * prepared database may be used.
 */
export function demoDatabaseStaleness(
  manifest: Omit<DemoDatabaseManifest, "counts">,
  current: Omit<DemoDatabaseManifest, "counts">,
): string[] {
  const reasons: string[] = [];
  if (manifest.pglite !== current.pglite) reasons.push(`made with PGlite ${manifest.pglite}, installed ${current.pglite}`);
  if (manifest.migrations.join("\n") !== current.migrations.join("\n")) reasons.push("the migrations changed since it was made");
  if (manifest.snapshot_sha256 !== current.snapshot_sha256) reasons.push("demo-snapshot.json changed since it was made");
  return reasons;
}

export type PreparedDemoDatabase = { usable: true; tarball: Blob; manifest: DemoDatabaseManifest } | { usable: false; reasons: string[] };

/** Reads the prepared demo database when it matches this checkout; otherwise says why not. */
export function preparedDemoDatabase(): PreparedDemoDatabase {
  let manifest: DemoDatabaseManifest;
  let tarball: Buffer;
  try {
    manifest = JSON.parse(readFileSync(DEMO_DATABASE_MANIFEST_FILE, "utf8")) as DemoDatabaseManifest;
    tarball = readFileSync(DEMO_DATABASE_FILE);
  } catch (error) {
    return { usable: false, reasons: [`not readable (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`] };
  }
  const reasons = demoDatabaseStaleness(manifest, currentDemoDatabaseSources());
  return reasons.length > 0 ? { usable: false, reasons } : { usable: true, tarball: new Blob([new Uint8Array(tarball)]), manifest };
}

/** "84 features, 400 voters, 3,937 votes, ..." from snapshot list lengths. */
export function describeDemoCounts(counts: Record<string, number>): string {
  return ["features", "voters", "votes", "comments", "releases", "messages"]
    .filter((list) => counts[list] !== undefined)
    .map((list) => `${counts[list]!.toLocaleString("en")} ${list}`)
    .join(", ");
}
