/** Clears the tally file before the resilience run and prints the totals after it. */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

export default function setup(project: TestProject) {
  const file = join(tmpdir(), `fb-resilience-tally-${process.pid}.jsonl`);
  rmSync(file, { force: true });
  project.provide("resilienceTallyFile", file);
  return () => {
    if (!existsSync(file)) return;
    const totals: Record<string, number> = { faults: 0, races: 0, hostile: 0 };
    const labels: Record<string, Map<string, number>> = { faults: new Map(), races: new Map(), hostile: new Map() };
    for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean)) {
      const { kind, label, n } = JSON.parse(line) as { kind: string; label: string; n: number };
      totals[kind] = (totals[kind] ?? 0) + n;
      labels[kind]?.set(label, (labels[kind]!.get(label) ?? 0) + n);
    }
    rmSync(file, { force: true });
    const lines = [
      `resilience: ${totals.faults} faults survived, ${totals.races} races run, ${totals.hostile} hostile inputs refused`,
      ...Object.entries(labels).flatMap(([kind, map]) => [...map].map(([label, n]) => `  ${kind}: ${label} x${n}`)),
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  };
}
