/**
 * Seeding for the process-level scenarios: a database connection from db/connect.ts and
 * projects imported through importSnapshot (docs/contract/project-snapshot.md), built on the main
 * harness's buildSnapshot (five-column roadmap, one secret and one embed key).
 */
import { randomBytes } from "node:crypto";
import { type DatabaseHandle, migrateToLatest, openDatabase } from "../../../db/connect.ts";
import type { SnapshotInput } from "../../../src/admin/snapshot.schema.ts";
import { importSnapshot } from "../../../src/admin/snapshot-import.ts";
import { buildSnapshot, type ImportedProject, type SnapshotParts } from "../../support/harness.ts";

type SnapshotVoter = NonNullable<SnapshotInput["voters"]>[number];
type SnapshotFeature = NonNullable<SnapshotInput["features"]>[number];

import type { WorkloadProject } from "./workload.ts";

export interface Seeder {
  handle: DatabaseHandle;
  importProject(overrides?: SnapshotParts): Promise<ImportedProject>;
  close(): Promise<void>;
}

/** Opens `url` (migrating it) and returns an importer over it. */
export async function openSeeder(url: string): Promise<Seeder> {
  const handle = await openDatabase({ DATABASE_URL: url, poolSize: 3 });
  await migrateToLatest(handle.db);
  return {
    handle,
    async importProject(overrides = {}) {
      const snapshot = buildSnapshot(overrides);
      const ids = await importSnapshot(handle.db, snapshot, {});
      const keys = snapshot.keys;
      return {
        slug: snapshot.project.slug,
        ids,
        secretKey: keys.find((k) => k.kind === "secret")!.key!,
        embedKey: keys.find((k) => k.kind === "embed")!.key!,
      };
    },
    close: () => handle.close(),
  };
}

/** An anonymous-voter token as a snapshot may carry it (X-VF-Anon). */
export function anonToken(): string {
  return `anon_${randomBytes(18).toString("base64url")}`;
}

/** `count` anonymous voters v0..v<count-1> with known tokens, for snapshot `voters`. */
export function anonVoters(count: number, prefix = "v"): { voters: SnapshotVoter[]; tokens: string[] } {
  const tokens = Array.from({ length: count }, anonToken);
  const voters = tokens.map((token, i) => ({
    ref: `${prefix}${i}`,
    kind: "anonymous" as const,
    anon_token: token,
    display_name: `Voter ${i}`,
  }));
  return { voters, tokens };
}

/** `count` approved features f0.. in the votable Suggestions column. */
export function openFeatures(count: number, prefix = "f"): SnapshotFeature[] {
  return Array.from({ length: count }, (_, i) => ({
    ref: `${prefix}${i}`,
    board: "roadmap",
    column: "c-open",
    heading: `Feature ${prefix}${i}`,
    description: `About ${prefix}${i}`,
  }));
}

/** The inner id map ({features: {ref: id}, ...}) of an imported project. */
export function idsOf(project: Pick<ImportedProject, "ids">): ImportedProject["ids"]["ids"] {
  return project.ids.ids ?? project.ids;
}

/**
 * Imports a project with `voters` anonymous voters (v0..) and `features` open features (f0..),
 * plus any other snapshot parts in `extra`; returns it with the voters' tokens and the feature
 * ids in ref order.
 */
export async function importVotingProject(
  seeder: Seeder,
  voters: number,
  features: number,
  extra: SnapshotParts = {},
): Promise<WorkloadProject> {
  const { voters: voterRows, tokens } = anonVoters(voters);
  const imported = await seeder.importProject({ voters: voterRows, features: openFeatures(features), ...extra });
  return { ...imported, tokens, featureIds: Object.values(idsOf(imported).features as Record<string, number>) };
}
