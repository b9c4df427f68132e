/**
 * A source's status name -> one of the six feature statuses (imports-v3.md, "Sources": the
 * per-source tables). `status_map` (ImportOptions.statusMap) wins over the table; its keys are
 * matched as written, then trimmed and lower-cased. A name neither knows is `open` with
 * `known: false` (the writer warns, "Mapping", Features).
 */
import { FEATURE_STATUSES } from "../../contract/enums.ts";
import type { ImportOptions, ImportSourceName } from "./import-data.ts";

export type FeatureStatusName = (typeof FEATURE_STATUSES)[number];

/** What a source status maps to: a status, or `merged` (Fider `duplicate`: merged into its original). */
export interface MappedStatus {
  status: FeatureStatusName | "merged";
  known: boolean;
}

const CANNY: Record<string, FeatureStatusName> = {
  open: "open",
  "under review": "open",
  planned: "planned",
  "in progress": "in_progress",
  complete: "done",
  closed: "denied",
};

const FIDER: Record<string, FeatureStatusName | "merged"> = {
  open: "open",
  started: "in_progress",
  completed: "done",
  declined: "denied",
  planned: "planned",
  duplicate: "merged",
  // The backup's integers, should a reader pass them through.
  "0": "open",
  "1": "in_progress",
  "2": "done",
  "3": "denied",
  "4": "planned",
  "5": "merged",
};

/** CSV: a status value, or a name as boards show it ("In progress", "Complete", "Declined"). */
const CSV: Record<string, FeatureStatusName> = {
  ...Object.fromEntries(FEATURE_STATUSES.map((s) => [s, s])),
  "under review": "open",
  new: "open",
  "in progress": "in_progress",
  started: "in_progress",
  complete: "done",
  completed: "done",
  shipped: "done",
  released: "done",
  closed: "denied",
  declined: "denied",
  rejected: "denied",
};

const TABLES: Record<ImportSourceName, Record<string, FeatureStatusName | "merged">> = { canny: CANNY, fider: FIDER, csv: CSV };

/**
 * Maps the source's status `name` (null: none given, which is `open` and known) for `source`,
 * `statusMap` first. Never throws.
 */
export function mapSourceStatus(source: ImportSourceName, name: string | null, statusMap: ImportOptions["statusMap"] = {}): MappedStatus {
  if (name === null || name.trim() === "") return { status: "open", known: true };
  const key = name
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, " ");
  const mapped =
    statusMap[name] ??
    statusMap[name.trim()] ??
    Object.entries(statusMap).find(
      ([k]) =>
        k
          .trim()
          .toLowerCase()
          .replace(/[\s_-]+/g, " ") === key,
    )?.[1];
  if (mapped !== undefined) return { status: mapped, known: true };
  const table = TABLES[source];
  const found = Object.hasOwn(table, key) ? table[key] : undefined;
  return found === undefined ? { status: "open", known: false } : { status: found, known: true };
}
