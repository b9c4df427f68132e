/**
 * First-run demo (`npm start` on an empty database): imports the bundled demo snapshot when the
 * database holds no project at all, so a fresh machine serves a real board with no setup. (A new
 * embedded database usually starts from the prepared demo database instead: see
 * demo-database.ts; then the demo is already there.)
 */
import type { Db } from "../../db/connect.ts";
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
