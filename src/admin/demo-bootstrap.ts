/**
 * First-run demo (`npm start` on an empty database): imports the bundled demo snapshot when the
 * database holds no project at all, so a fresh machine serves a real board with no setup. (A new
 * embedded database usually starts from the prepared demo database instead: see
 * demo-database.ts; then the demo is already there.)
 */
import type { Db } from "../../db/connect.ts";
import { type AppCaches, notifyCacheInvalidation } from "../lib/data/app-caches.ts";
import { withProjectWriteLock } from "../lib/data/project-write-lock.ts";
import { isLoopbackHost, WELL_KNOWN_KEYS, wellKnownDemoKeysAllowed } from "../lib/rules/published-demo-keys.ts";
import { hashSecret } from "../lib/rules/secrets.ts";
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

/**
 * The demo project a start finds already in the database: the bundled demo's slug holding its
 * published embed key, when those keys may be served (loopback HOST, or DEMO=public); else
 * undefined. Only the embed key is known from the database (keys are kept as digests).
 */
export async function findServedDemo(db: Db, config: { HOST: string; DEMO: string }): Promise<DemoProject | undefined> {
  if (config.DEMO === "off" || !wellKnownDemoKeysAllowed(config)) return undefined;
  const row = await db
    .selectFrom("api_keys")
    .innerJoin("projects", "projects.id", "api_keys.project_id")
    .select("projects.slug")
    .where("projects.slug", "=", DEMO_SLUG)
    .where("api_keys.key_hash", "=", hashSecret(DEMO_EMBED_KEY))
    .executeTakeFirst();
  return row ? { slug: row.slug, secretKey: "", embedKey: DEMO_EMBED_KEY } : undefined;
}

/**
 * The origins a browser shows for this server listening on `port` (clients-v3.md, "The demo
 * page": the demo's allowed_origins include the server's own origin): PUBLIC_BASE_URL's origin
 * when set; on a loopback HOST, http://127.0.0.1:{port} and http://localhost:{port}; else
 * http://{HOST}:{port} unless HOST is a wildcard address.
 */
export function serverOrigins(config: { HOST: string; PUBLIC_BASE_URL?: string | undefined }, port: number): string[] {
  const origins = new Set<string>();
  if (config.PUBLIC_BASE_URL) origins.add(new URL(config.PUBLIC_BASE_URL).origin);
  if (isLoopbackHost(config.HOST)) {
    origins.add(`http://127.0.0.1:${port}`);
    origins.add(`http://localhost:${port}`);
  } else if (!["0.0.0.0", "::", "[::]"].includes(config.HOST.trim())) {
    origins.add(new URL(`http://${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${port}`).origin);
  }
  return [...origins];
}

/**
 * Adds `origins` to project `slug`'s allowed_origins (those missing, in order, under the
 * project's write lock), then clears every instance's caches (`caches`: this one's at once).
 * Returns the origins added; none when the project is missing or already allows them all.
 */
export async function allowDemoOrigins(db: Db, slug: string, origins: string[], caches?: AppCaches): Promise<string[]> {
  const project = await db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirst();
  if (!project) return [];
  const added = await withProjectWriteLock(db, project.id, async (trx) => {
    const { allowed_origins } = await trx
      .selectFrom("projects")
      .select("allowed_origins")
      .where("id", "=", project.id)
      .executeTakeFirstOrThrow();
    const missing = origins.filter((origin) => !allowed_origins.includes(origin));
    if (missing.length > 0) {
      await trx
        .updateTable("projects")
        .set({ allowed_origins: [...allowed_origins, ...missing] })
        .where("id", "=", project.id)
        .execute();
    }
    return missing;
  });
  if (added.length > 0) await notifyCacheInvalidation(db, caches);
  return added;
}
