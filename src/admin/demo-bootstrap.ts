/**
 * First-run demo (`npm start` on an empty database): imports the bundled demo snapshot when the
 * database holds no project at all, so a fresh machine serves a real board with no setup.
 */
import type { Db } from "../../db/connect.ts";
import { loadDemoSnapshot } from "./demo.ts";
import { importSnapshot } from "./snapshot-import.ts";

export interface DemoProject {
  slug: string;
  secretKey: string;
  embedKey: string;
}

/** Imports the demo when no project exists; returns its slug and keys, or undefined. */
export async function ensureDemoProject(db: Db): Promise<DemoProject | undefined> {
  const any = await db.selectFrom("projects").select("id").limit(1).executeTakeFirst();
  if (any) return undefined;
  const snapshot = await loadDemoSnapshot();
  await importSnapshot(db, snapshot, {});
  const keyOf = (kind: string) => snapshot.keys.find((key: { kind: string }) => key.kind === kind)?.key ?? "";
  return { slug: snapshot.project.slug, secretKey: keyOf("secret"), embedKey: keyOf("embed") };
}
