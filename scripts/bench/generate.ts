/**
 * Bulk generator of bench projects, beside the snapshot importer: the same tables, loaded with
 * COPY through the `postgres` driver in one transaction, counters then computed in SQL from the
 * loaded rows exactly as src/admin/snapshot-import.ts does (see counters.ts). Keys and anonymous
 * tokens are stored as hashSecret digests of plaintexts the bench knows (dataset.ts).
 *
 * Standalone: `npx tsx scripts/bench/generate.ts small|large [postgres-url]`.
 */
import { pathToFileURL } from "node:url";
import postgres, { type Sql, type TransactionSql } from "postgres";
import { generateVoterId, hashSecret } from "../../src/lib/rules/secrets.ts";
import { copyRows, reserveIds } from "./copy.ts";
import { createStaging, insertWithCounters } from "./counters.ts";
import {
  anonToken,
  benchKeys,
  commentText,
  description,
  heading,
  LARGE,
  type ProjectSpec,
  permutation,
  prng,
  SMALL,
  skewedIndex,
  TAG_NAMES,
} from "./dataset.ts";

const DAY_MS = 86_400_000;
const VOTER_BITS = 2 ** 18;

const defaultSettings = {
  allow_comments: true,
  allow_suggestions: true,
  allow_voting: true,
  allow_likes: true,
  default_mode: "roadmap",
  score_is_weighted: false,
  show_archived: false,
  show_comments: true,
  show_denied: true,
  show_progress: true,
  show_views: true,
  show_votes: true,
};
const defaultTheme = {
  font: "Inter",
  radius: "8px",
  light: {
    accent: "#4f46e5",
    background: "#ffffff",
    border: "#e5e7eb",
    card_background: "#f9fafb",
    text: "#111827",
    text_secondary: "#6b7280",
  },
  dark: {
    accent: "#818cf8",
    background: "#111827",
    border: "#374151",
    card_background: "#1f2937",
    text: "#f9fafb",
    text_secondary: "#9ca3af",
  },
};

/** Board layout: a roadmap and two custom boards; weights are the share of features on each. */
const BOARDS = [
  {
    kind: "roadmap",
    name: "Roadmap",
    slug: "roadmap",
    share: 0.6,
    columns: [
      { name: "Suggestions", status: "open", votable: true, share: 0.5 },
      { name: "Planned", status: "planned", votable: true, share: 0.15 },
      { name: "In progress", status: "in_progress", votable: true, share: 0.1 },
      { name: "Done", status: "done", votable: false, share: 0.15 },
      { name: "Declined", status: "denied", votable: false, share: 0.05 },
    ],
  },
  {
    kind: "custom",
    name: "Mobile",
    slug: "mobile",
    share: 0.2,
    columns: [
      { name: "Ideas", status: null, votable: true, share: 0.6 },
      { name: "Next", status: null, votable: true, share: 0.25 },
      { name: "Shipped", status: null, votable: false, share: 0.1 },
    ],
  },
  {
    kind: "custom",
    name: "Public API",
    slug: "api",
    share: 0.2,
    columns: [
      { name: "Ideas", status: null, votable: true, share: 0.6 },
      { name: "Next", status: null, votable: true, share: 0.25 },
      { name: "Shipped", status: null, votable: false, share: 0.1 },
    ],
  },
] as const;
const CUSTOM_STATUS = ["open", "planned", "done"];

/** Picks an index from cumulative shares (the remainder goes to `fallback`). */
function byShare(u: number, shares: readonly { share: number }[], fallback: number): number {
  let acc = 0;
  for (let i = 0; i < shares.length; i++) {
    acc += shares[i]!.share;
    if (u < acc) return i;
  }
  return fallback;
}

export interface GeneratedProject {
  slug: string;
  projectId: number;
  seconds: number;
}

/** The tables a generated project fills, vacuumed and analyzed once it is loaded. */
export const GENERATED_TABLES = [
  "features",
  "feature_search",
  "feature_similarity",
  "feature_similarity_postings",
  "feature_tier_votes",
  "project_voter_counts",
  "votes",
  "comments",
  "voters",
  "comment_likes",
  "feature_tags",
  "columns",
  "boards",
  "api_keys",
  "projects",
];

/**
 * VACUUMs each generated table that has under 99 % of its pages marked all-visible, as
 * autovacuum would leave a read-mostly table: index-only scans read the heap for every row of a
 * page not so marked, and this machine's Postgres runs without autovacuum. For a database kept
 * with --reuse, whose load may have been vacuumed before its commit was flushed (which marks
 * nothing).
 */
export async function settleVisibility(sql: Sql): Promise<void> {
  const unsettled = await sql<{ relname: string }[]>`
    SELECT relname FROM pg_class
    WHERE relname = ANY(${GENERATED_TABLES}::text[]) AND relkind = 'r' AND relnamespace = 'public'::regnamespace
      AND relpages > 0 AND relallvisible < relpages * 0.99`;
  for (const { relname } of unsettled) await sql.unsafe(`VACUUM ${relname}`);
}

/**
 * Creates project `spec.slug` (replacing one of that slug) with every row and exact counters.
 * Progress goes to stderr. Runs VACUUM ANALYZE afterwards so plans see the real sizes.
 */
export async function generateProject(databaseUrl: string, spec: ProjectSpec, seed = 7): Promise<GeneratedProject> {
  const started = performance.now();
  process.stderr.write(
    `generating ${spec.slug}: ${spec.features.toLocaleString("en-US")} features, ` +
      `${spec.votes.toLocaleString("en-US")} votes, ${spec.voters.toLocaleString("en-US")} voters, ` +
      `${spec.comments.toLocaleString("en-US")} comments\n`,
  );
  // A connection of its own: temp_buffers can only be set before the session touches a temp table.
  const sql = postgres(databaseUrl, {
    max: 1,
    onnotice: () => {},
    // synchronous_commit stays on: the VACUUM just after the commit marks pages all-visible
    // only once the commit is flushed, and index-only scans depend on those marks.
    connection: { temp_buffers: "512MB", work_mem: "256MB", maintenance_work_mem: "256MB" },
  });
  const projectId = await sql.begin(async (trx) => {
    await trx`DELETE FROM projects WHERE slug = ${spec.slug}`;
    await createStaging(trx);
    return load(trx, spec, seed);
  });
  for (const table of GENERATED_TABLES) {
    await sql.unsafe(`VACUUM (ANALYZE) ${table}`);
  }
  await sql.end();
  const seconds = (performance.now() - started) / 1000;
  process.stderr.write(`generated ${spec.slug} in ${seconds.toFixed(1)} s\n`);
  return { slug: spec.slug, projectId, seconds };
}

async function load(trx: TransactionSql, spec: ProjectSpec, seed: number): Promise<number> {
  const random = prng(seed);
  const now = Date.now();
  const [project] = await trx<{ id: number }[]>`
    INSERT INTO projects (slug, name, description, settings, theme)
    VALUES (${spec.slug}, ${spec.name}, 'Generated by scripts/bench/generate.ts', ${trx.json(defaultSettings)}, ${trx.json(defaultTheme)})
    RETURNING id`;
  const projectId = project!.id;
  const keys = benchKeys(spec.slug);
  await trx`INSERT INTO api_keys (project_id, kind, key_hash) VALUES
    (${projectId}, 'secret', ${hashSecret(keys.secret)}), (${projectId}, 'embed', ${hashSecret(keys.embed)})`;

  const tagIds = (
    await trx<{ id: number }[]>`
    INSERT INTO tags ${trx(TAG_NAMES.map((name) => ({ project_id: projectId, name })))} RETURNING id`
  ).map((r) => r.id);
  const tiers = await trx<{ id: number; multiplier: number }[]>`
    INSERT INTO tiers ${trx([
      { project_id: projectId, name: "Starter", mrr_cents: 900, multiplier: 1 },
      { project_id: projectId, name: "Pro", mrr_cents: 4900, multiplier: 3 },
      { project_id: projectId, name: "Enterprise", mrr_cents: 49900, multiplier: 10 },
    ])} RETURNING id, multiplier`;

  const boardIds: number[] = [];
  const columnIds: number[][] = [];
  for (const [b, board] of BOARDS.entries()) {
    const [row] = await trx<{ id: number }[]>`INSERT INTO boards (project_id, kind, name, slug, position)
      VALUES (${projectId}, ${board.kind}, ${board.name}, ${board.slug}, ${b}) RETURNING id`;
    boardIds.push(row!.id);
    const cols = await trx<{ id: number }[]>`INSERT INTO columns ${trx(
      board.columns.map((c, position) => ({
        project_id: projectId,
        board_id: row!.id,
        name: c.name,
        color: c.status === null ? null : "#6b7280",
        position,
        is_votable: c.votable,
        status: c.status,
      })),
    )} RETURNING id`;
    columnIds.push(cols.map((c) => c.id));
  }

  // Voters: every tenth has a tier, so weighted scores differ from plain counts.
  const firstVoter = await reserveIds(trx, "voters", spec.voters);
  const voterWeight = new Uint8Array(spec.voters);
  const voterCreated = now - 800 * DAY_MS;
  await copyRows(
    trx,
    "stage_voters",
    ["id", "public_id", "anon_token_hash", "display_name", "tier_id", "created_at"],
    spec.voters,
    (function* () {
      for (let i = 0; i < spec.voters; i++) {
        const tier = i % 10 === 0 ? tiers[(i / 10) % 3]! : null;
        voterWeight[i] = tier?.multiplier ?? 1;
        yield [
          firstVoter + i,
          generateVoterId(),
          hashSecret(anonToken(spec.slug, i)),
          `Voter ${i}`,
          tier?.id ?? null,
          new Date(voterCreated + (i / spec.voters) * 700 * DAY_MS),
        ];
      }
    })(),
  );

  // Features: popularity rank -> row index through a permutation, so hot features sit on every board.
  const F = spec.features;
  const byRank = permutation(random, F);
  const featureCreated = new Float64Array(F);
  const firstFeature = await reserveIds(trx, "features", F);
  const positions = BOARDS.map(() => 0);
  const pinned = new Set(Array.from(byRank.subarray(0, Math.min(5, F))));
  await copyRows(
    trx,
    "stage_features",
    [
      "id",
      "board_id",
      "column_id",
      "status",
      "heading",
      "description",
      "author_voter_id",
      "is_approved",
      "is_pinned",
      "position",
      "progress",
      "view_count",
      "created_at",
    ],
    F,
    (function* () {
      for (let i = 0; i < F; i++) {
        const b = byShare(random(), BOARDS, 0);
        const board = BOARDS[b]!;
        const archived = random() < 0.03;
        const c = byShare(random(), board.columns, 0);
        const status = archived ? "archived" : (board.columns[c]!.status ?? CUSTOM_STATUS[c]!);
        const created = now - random() * 730 * DAY_MS;
        featureCreated[i] = created;
        const suggestion = b === 0 && c === 0 && !archived;
        yield [
          firstFeature + i,
          boardIds[b]!,
          archived ? null : columnIds[b]![c]!,
          status,
          heading(random),
          random() < 0.85 ? description(random) : null,
          random() < 0.7 ? firstVoter + Math.floor(random() * spec.voters) : null,
          suggestion ? random() < 0.9 : true,
          pinned.has(i),
          positions[b]!++,
          status === "in_progress" ? 10 + Math.floor(random() * 80) : null,
          Math.floor(random() * random() * 5000),
          new Date(created),
        ];
      }
    })(),
  );

  // Tags: tag t is on roughly 12 % / (t + 1) of features, so filters range from broad to narrow.
  const featureTags: [number, number][] = [];
  for (let i = 0; i < F; i++) {
    for (let t = 0; t < tagIds.length; t++) if (random() < 0.12 / (t + 1)) featureTags.push([firstFeature + i, tagIds[t]!]);
  }

  await copyVotes(trx, spec, random, { projectId, firstFeature, firstVoter, byRank, featureCreated, voterWeight, now });
  const firstComment = await copyComments(trx, spec, random, { projectId, firstFeature, firstVoter, byRank, featureCreated, now });

  const likeKeys = new Set<number>();
  while (likeKeys.size < spec.likes) {
    likeKeys.add(skewedIndex(random, spec.comments) * VOTER_BITS + Math.floor(random() * spec.voters));
  }
  await copyRows(
    trx,
    "stage_likes",
    ["comment_id", "voter_id"],
    likeKeys.size,
    (function* () {
      for (const key of likeKeys) yield [firstComment + Math.floor(key / VOTER_BITS), firstVoter + (key % VOTER_BITS)];
    })(),
  );

  await insertWithCounters(trx, projectId);
  await copyRows(trx, "feature_tags", ["feature_id", "tag_id"], featureTags.length, featureTags);
  return projectId;
}

interface Layout {
  projectId: number;
  firstFeature: number;
  firstVoter: number;
  byRank: Int32Array;
  featureCreated: Float64Array;
  now: number;
}

/**
 * Votes: every voter casts at least one, the rest go to skewed features from uniform voters;
 * (feature, voter) pairs are unique. Sorted by feature so the primary key fills in order.
 */
async function copyVotes(trx: TransactionSql, spec: ProjectSpec, random: () => number, l: Layout & { voterWeight: Uint8Array }) {
  const seen = new Set<number>();
  const keys = new Float64Array(spec.votes);
  let n = 0;
  while (n < spec.votes) {
    const voter = n < spec.voters ? n : Math.floor(random() * spec.voters);
    const key = l.byRank[skewedIndex(random, spec.features)]! * VOTER_BITS + voter;
    if (seen.has(key)) continue;
    seen.add(key);
    keys[n++] = key;
  }
  seen.clear();
  keys.sort();
  await copyRows(
    trx,
    "stage_votes",
    ["feature_id", "voter_id", "weight", "created_at"],
    spec.votes,
    (function* () {
      for (const key of keys) {
        const feature = Math.floor(key / VOTER_BITS);
        const voter = key % VOTER_BITS;
        const created = l.featureCreated[feature]!;
        // Square root skews votes towards the recent end, as trending boards see.
        const at = created + (l.now - created) * Math.sqrt(random());
        yield [l.firstFeature + feature, l.firstVoter + voter, l.voterWeight[voter]!, new Date(at)];
      }
    })(),
  );
}

/** Comments: three quarters top level on skewed features, a quarter replies to those. Returns the first id. */
async function copyComments(trx: TransactionSql, spec: ProjectSpec, random: () => number, l: Layout): Promise<number> {
  const top = Math.round(spec.comments * 0.75);
  const first = await reserveIds(trx, "comments", spec.comments);
  const feature = new Int32Array(top);
  const created = new Float64Array(top);
  await copyRows(
    trx,
    "stage_comments",
    ["id", "feature_id", "parent_id", "voter_id", "content", "created_at"],
    spec.comments,
    (function* () {
      for (let i = 0; i < spec.comments; i++) {
        const voter = l.firstVoter + Math.floor(random() * spec.voters);
        if (i < top) {
          const f = l.byRank[skewedIndex(random, spec.features)]!;
          const at = l.featureCreated[f]! + (l.now - l.featureCreated[f]!) * random();
          feature[i] = f;
          created[i] = at;
          yield [first + i, l.firstFeature + f, null, voter, commentText(random), new Date(at)];
        } else {
          const parent = Math.floor(random() * top);
          const at = created[parent]! + (l.now - created[parent]!) * random();
          yield [first + i, l.firstFeature + feature[parent]!, first + parent, voter, commentText(random), new Date(at)];
        }
      }
    })(),
  );
  return first;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const which = process.argv[2] === "large" ? LARGE : SMALL;
  await generateProject(process.argv[3] ?? "postgres://postgres@127.0.0.1:5432/fb_bench", which);
}
