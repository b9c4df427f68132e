/**
 * Counts for the README's reliability section: faults survived, races run, hostile inputs
 * refused. Each test file appends to one JSON-lines file that global-setup.ts clears before the
 * run and sums up after it.
 */
import { appendFileSync } from "node:fs";
import { inject } from "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    resilienceTallyFile: string;
  }
}

export type TallyKind = "faults" | "races" | "hostile";

/** Adds `n` to the kind's count under `label` (call once the assertions about it passed). */
export function recordCount(kind: TallyKind, label: string, n = 1): void {
  let file: string | undefined;
  try {
    file = inject("resilienceTallyFile");
  } catch {
    file = undefined;
  }
  if (!file) return;
  appendFileSync(file, `${JSON.stringify({ kind, label, n })}\n`);
}
