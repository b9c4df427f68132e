/**
 * The bench's similar-features rows (engagement-api-v3.md, "Similar features"): the public route
 * with one repeated text (answered by the shared read cache), with a text never asked before on
 * every request (a heading of the generated vocabulary with one typo: the route's purpose, a
 * voter about to file a duplicate), with novel texts that are near-duplicates of nothing (the
 * slow path: every partial match is scored), and the owner's merge candidates of hot features.
 * Each path list is longer than a run can request, so no text repeats in the uncached rows.
 */
import { heading, prng } from "./dataset.ts";
import type { Fixtures } from "./fixtures.ts";

/** A read row of scripts/bench.ts: its name and the paths it rotates over. */
export interface SimilarCase {
  route: string;
  paths: string[];
  /** Connections when not the run's: one, for the route's own latency without queueing. */
  connections?: number;
}

const VARIANTS = 200_000;

/** `text` with the characters at `at` and `at + 1` swapped (one typo). */
function transposed(text: string, at: number): string {
  const i = at % (text.length - 1);
  return text.slice(0, i) + text[i + 1] + text[i] + text.slice(i + 2);
}

/** Words outside the generated vocabulary, for texts that are near-duplicates of nothing. */
const novelWords = ["zoom", "webinar", "kiosk", "barcode", "voicemail", "quota", "sandbox", "locale", "captcha", "hotkey"];

const built = new WeakMap<Fixtures, SimilarCase[]>();

/** The similar-features rows of the project `fx` (built once per project: scripts/bench.ts asks per row). */
export function similarCases(fx: Fixtures): SimilarCase[] {
  const known = built.get(fx);
  if (known) return known;
  const cases = buildCases(fx);
  built.set(fx, cases);
  return cases;
}

function buildCases(fx: Fixtures): SimilarCase[] {
  const p = `/api/v3/projects/${fx.slug}`;
  const random = prng(11);
  const typos = Array.from({ length: VARIANTS }, (_, i) => {
    const text = transposed(heading(random), i);
    return `${p}/features/similar?q=${encodeURIComponent(text)}`;
  });
  const novel = Array.from({ length: VARIANTS }, (_, i) => {
    const text = `${novelWords[i % novelWords.length]} ${novelWords[Math.floor(i / novelWords.length) % novelWords.length]} ${heading(random).split(" ")[1]}`;
    return `${p}/features/similar?q=${encodeURIComponent(text)}&n=${i}`;
  });
  return [
    { route: "GET features/similar?q=<heading> (cached)", paths: [`${p}/features/similar?q=${encodeURIComponent(heading(prng(3)))}`] },
    { route: "GET features/similar, uncached (a heading with a typo)", paths: typos },
    { route: "GET features/similar, uncached (novel text)", paths: novel },
    // At 32 connections a closed loop keeps 2 cores saturated and p99 is mostly queueing
    // (32 / throughput); one connection gives the latency of one lookup on an idle server.
    { route: "GET features/similar, uncached (a heading with a typo), 1 connection", paths: typos.slice(100_000), connections: 1 },
    { route: "GET features/similar, uncached (novel text), 1 connection", paths: novel.slice(100_000), connections: 1 },
    { route: "GET admin/features/{id}/similar (owner)", paths: fx.hotFeatureIds.map((id) => `${p}/admin/features/${id}/similar`) },
  ];
}
