/**
 * First-run demo (`npm start` on an empty database): imports the bundled demo snapshot when the
 * database holds no project at all, so a fresh machine serves a real board with no setup. (A new
 * embedded database usually starts from the prepared demo database instead: see
 * demo-database.ts; then the demo is already there.)
 */
import type { Db } from "../../db/connect.ts";
import { notifyCacheInvalidation } from "../lib/data/app-caches.ts";
import { withProjectWriteLock } from "../lib/data/project-write-lock.ts";
import { WELL_KNOWN_KEYS } from "../lib/rules/published-demo-keys.ts";
import { type KeyKind, replaceKeys } from "../routes/keys/index.ts";
import { DEMO_EMBED_KEY, DEMO_SECRET_KEY, DEMO_SLUG, loadDemoSnapshot } from "./demo.ts";
import { describeDemoCounts } from "./demo-database.ts";
import { importSnapshot } from "./snapshot-import.ts";

export interface DemoProject {
  slug: string;
  secretKey: string;
  embedKey: string;
}

/** The bundled demo project's slug and keys (what the banner prints). */
export const demoProject: DemoProject = { slug: DEMO_SLUG, secretKey: DEMO_SECRET_KEY, embedKey: DEMO_EMBED_KEY };

/** Rows per snapshot list (features, voters, votes...) of a snapshot document. */
export function snapshotCounts(snapshot: object): Record<string, number> {
  return Object.fromEntries(
    Object.entries(snapshot)
      .filter(([, value]) => Array.isArray(value))
      .map(([list, value]) => [list, (value as unknown[]).length]),
  );
}

/**
 * Imports the demo when no project exists, announcing it through `progress` first; returns its
 * slug and keys, or undefined when the database already held a project.
 */
export async function ensureDemoProject(db: Db, progress: (line: string) => void = () => {}): Promise<DemoProject | undefined> {
  const any = await db.selectFrom("projects").select("id").limit(1).executeTakeFirst();
  if (any) return undefined;
  const snapshot = loadDemoSnapshot();
  progress(`demo: loading demo project "${snapshot.project.slug}" (${describeDemoCounts(snapshotCounts(snapshot))})...`);
  await importSnapshot(db, snapshot, {});
  const keyOf = (kind: string) => snapshot.keys.find((key: { kind: string }) => key.kind === kind)?.key ?? "";
  return { slug: snapshot.project.slug, secretKey: keyOf("secret"), embedKey: keyOf("embed") };
}

/**
 * Replaces the bundled demo's published keys, in every project that holds one, by random keys
 * of the same kind, and returns the new keys (plaintext, shown this once) by project; empty when
 * no project holds one. Each project is changed under its write lock and re-checked there, so
 * two instances starting together replace a key once. Clears every instance's key cache.
 */
export async function replaceWellKnownDemoKeys(db: Db): Promise<DemoProject[]> {
  const digests = WELL_KNOWN_KEYS.map((key) => key.digest);
  const holders = await db
    .selectFrom("api_keys")
    .innerJoin("projects", "projects.id", "api_keys.project_id")
    .select(["projects.id", "projects.slug"])
    .where("api_keys.key_hash", "in", digests)
    .distinct()
    .orderBy("projects.id")
    .execute();
  const replaced: DemoProject[] = [];
  for (const project of holders) {
    const keys = await withProjectWriteLock(db, project.id, async (trx) => {
      const found = await trx
        .selectFrom("api_keys")
        .select("key_hash")
        .where("project_id", "=", project.id)
        .where("key_hash", "in", digests)
        .execute();
      const fresh: Partial<Record<KeyKind, string>> = {};
      for (const { kind, digest } of WELL_KNOWN_KEYS) {
        if (found.some((row) => row.key_hash === digest)) fresh[kind] = (await replaceKeys(trx, project.id, kind)).key;
      }
      return fresh;
    });
    if (keys.secret || keys.embed) replaced.push({ slug: project.slug, secretKey: keys.secret ?? "", embedKey: keys.embed ?? "" });
  }
  if (replaced.length > 0) await notifyCacheInvalidation(db);
  return replaced;
}
