/**
 * The bench's synthetic projects: sizes, the plaintext secrets the load generator presents, and
 * deterministic text and popularity helpers. Everything is seeded, so two runs produce the same
 * headings, the same vote graph and the same hot features.
 */

/** Sizes of one generated project. */
export interface ProjectSpec {
  slug: string;
  name: string;
  features: number;
  votes: number;
  voters: number;
  comments: number;
  likes: number;
}

export const SMALL: ProjectSpec = {
  slug: "bench-small",
  name: "Bench (small)",
  features: 1_000,
  votes: 10_000,
  voters: 2_000,
  comments: 3_000,
  likes: 1_000,
};

export const LARGE: ProjectSpec = {
  slug: "bench-large",
  name: "Bench (large)",
  features: 100_000,
  votes: 1_000_000,
  voters: 200_000,
  comments: 300_000,
  likes: 100_000,
};

/** Plaintext keys of a bench project (stored as SHA-256 digests, like every key). */
export function benchKeys(slug: string): { secret: string; embed: string } {
  return { secret: `bench_sk_${slug}_0123456789abcdef`, embed: `bench_ek_${slug}_0123456789abcdef` };
}

/** The X-VF-Anon token of generated voter number `index` (0-based) of a project. */
export function anonToken(slug: string, index: number): string {
  return `bench_anon_${slug}_${index}`;
}

/** Word the bench searches for with q= (a noun of middling frequency). */
export const SEARCH_TERM = "calendar";
/** Index (0-based, in insertion order) of the tag the bench filters on. */
export const FILTER_TAG_INDEX = 3;
export const TAG_NAMES = [
  "UI",
  "API",
  "Mobile",
  "Integrations",
  "Performance",
  "Billing",
  "Security",
  "Reporting",
  "Accessibility",
  "Onboarding",
  "Notifications",
  "Search",
];

/** mulberry32: a tiny seeded PRNG returning floats in [0, 1). */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Popularity: rank r of n drawn with P(rank < k) = sqrt(k / n), so the top 1 % of features gets
 * about 10 % of the votes, roughly what public boards show.
 */
export function skewedIndex(random: () => number, n: number): number {
  const u = random();
  return Math.min(n - 1, Math.floor(n * u * u));
}

/** A seeded permutation of 0..n-1 (Fisher-Yates), mapping popularity rank to row index. */
export function permutation(random: () => number, n: number): Int32Array {
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const tmp = out[i]!;
    out[i] = out[j]!;
    out[j] = tmp;
  }
  return out;
}

const verbs = ["Add", "Support", "Improve", "Allow", "Fix", "Show", "Export", "Sync", "Hide", "Customize", "Speed up", "Simplify"];
const nouns = [
  "calendar",
  "dashboard",
  "invoice",
  "report",
  "sidebar",
  "theme",
  "webhook",
  "avatar",
  "timeline",
  "filter",
  "search",
  "comment",
  "label",
  "workspace",
  "project",
  "template",
  "checklist",
  "reminder",
  "attachment",
  "folder",
  "chart",
  "widget",
  "shortcut",
  "profile",
  "permission",
  "integration",
  "inbox",
  "notification",
  "editor",
  "table",
  "kanban",
  "gantt",
  "budget",
  "receipt",
  "payment",
  "subscription",
  "onboarding",
  "tooltip",
  "banner",
  "sitemap",
  "backup",
  "import",
  "export",
  "archive",
  "tag",
  "status",
  "priority",
  "estimate",
  "milestone",
  "sprint",
  "release",
  "changelog",
  "roadmap",
  "survey",
  "poll",
  "form",
  "field",
  "column",
  "row",
  "board",
  "team",
  "role",
  "audit",
  "session",
  "password",
  "login",
  "token",
  "domain",
  "email",
  "digest",
  "summary",
  "preview",
  "thumbnail",
  "gallery",
  "upload",
  "download",
  "printer",
  "scanner",
  "map",
  "location",
];
const places = ["on mobile", "in the editor", "for admins", "in reports", "via the API", "for teams", "offline", "in dark mode"];
const openers = [
  "It would help our team if",
  "We often need to",
  "Customers keep asking why they cannot",
  "Please make it possible to",
  "Right now it is hard to",
  "I would love to",
];
const actions = ["share the", "filter by", "reorder the", "bulk edit the", "pin the", "link each", "print the", "duplicate the"];

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}

/** A plausible feature heading, e.g. "Export invoice in reports". */
export function heading(random: () => number): string {
  return `${pick(random, verbs)} ${pick(random, nouns)} ${pick(random, places)}`;
}

/** A one- or two-sentence description, 60 to 220 characters. */
export function description(random: () => number): string {
  const first = `${pick(random, openers)} ${pick(random, actions)} ${pick(random, nouns)} ${pick(random, places)}.`;
  if (random() < 0.5) return first;
  return `${first} Today we ${pick(random, actions)} ${pick(random, nouns)} by hand, which takes a while for every ${pick(random, nouns)}.`;
}

/** Comment text, 20 to 160 characters. */
export function commentText(random: () => number): string {
  const short = ["+1", "Yes please!", "We need this too.", "Any update on this?", "This would save us hours."];
  if (random() < 0.4) return pick(random, short);
  return (
    `${pick(random, openers)} ${pick(random, actions)} ${pick(random, nouns)} ${pick(random, places)}; ` +
    `our ${pick(random, nouns)} depends on it.`
  );
}
