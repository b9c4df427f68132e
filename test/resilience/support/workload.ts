/**
 * The steady mixed workload the fault scenarios run: reads of the list, a feature and the
 * project document, votes and withdrawals by many voters (some with Idempotency-Key), and
 * identity mints. `acceptable` says which answers count as the request succeeding;
 * `acceptableWithoutSharedStore` while Redis is down, when keyed writes cannot claim their key.
 */
import type { ImportedProject } from "../../support/harness.ts";
import type { HttpRequest, LoadSample } from "./http.ts";

export interface WorkloadProject extends ImportedProject {
  tokens: string[];
  featureIds: number[];
}

export function mixedWorkload(project: WorkloadProject, tag: string): (i: number) => HttpRequest & { label: string } {
  const base = `/api/v3/projects/${project.slug}`;
  const key = { "X-API-Key": project.secretKey };
  return (i) => {
    const feature = project.featureIds[i % project.featureIds.length]!;
    const voter = { ...key, "X-VF-Anon": project.tokens[(i * 7) % project.tokens.length]! };
    switch (i % 8) {
      case 0:
      case 1:
        return { label: "read", path: `${base}/features?sort=top&per_page=5`, headers: key };
      case 2:
        return { label: "read", path: `${base}/features/${feature}`, headers: voter };
      case 3:
        return { label: "read", path: base, headers: key };
      case 4:
        return {
          label: "keyed write",
          method: "POST",
          path: `${base}/features/${feature}/vote`,
          headers: { ...voter, "Idempotency-Key": `${tag}-${i}` },
        };
      case 5:
        return { label: "write", method: "DELETE", path: `${base}/features/${feature}/vote`, headers: voter };
      case 6:
        return { label: "write", method: "POST", path: `${base}/features/${feature}/vote`, headers: voter };
      default:
        return { label: "write", method: "POST", path: `${base}/identity`, headers: key, body: "{}" };
    }
  };
}

/** Reads answer 200; votes, withdrawals and mints 200/201, or 409 when the state already is. */
export function acceptable(sample: LoadSample): boolean {
  if (sample.error) return false;
  if (sample.label === "read") return sample.status === 200;
  return sample.status === 200 || sample.status === 201 || sample.status === 409;
}

/**
 * The same, and a keyed write may answer 500 internal: its claim cannot be made in the shared
 * store, so it does not run (docs/architecture.md, "Data rules": the claim never falls back to
 * per-process memory).
 */
export function acceptableWithoutSharedStore(sample: LoadSample): boolean {
  if (sample.label === "keyed write" && !sample.error && sample.status === 500) return errorCode(sample) === "internal";
  return acceptable(sample);
}

/** The error code of a sample's envelope, if it has one. */
export function errorCode(sample: LoadSample): string | undefined {
  try {
    return JSON.parse(sample.text)?.error?.code ?? undefined;
  } catch {
    return undefined;
  }
}

/** A short description of the samples that were not acceptable (for failure messages). */
export function describeFailures(samples: LoadSample[], isAcceptable: (sample: LoadSample) => boolean = acceptable): string {
  const bad = samples.filter((s) => !isAcceptable(s));
  const counts = new Map<string, number>();
  for (const s of bad) {
    const key = `${s.label} ${s.status} ${s.error ?? ""} ${s.method} ${s.path.replace(/\d+/g, "N")} ${s.text.slice(0, 120)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${n}x ${k}`).join("\n");
}
