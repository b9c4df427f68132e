/**
 * Import of a whole project from a snapshot document (spec/project-snapshot.md).
 *
 * Two phases: validation (the zod shape, then every rule that spans objects; all faults are
 * collected and reported together with their JSON paths, so an author fixes a file in one pass)
 * and writing (one transaction, multi-row inserts in chunks, counters computed in SQL at the end).
 */
import { type Kysely, sql, type Transaction } from "kysely";
import semver from "semver";
import type { z } from "zod";
import type { Database } from "../../db/schema.ts";
import { generateHandle } from "../lib/handles.ts";
import { renderMarkdown } from "../lib/markdown.ts";
import { generateVoterId, hashSecret } from "../lib/secrets.ts";
import { voteExponent } from "../lib/trending.ts";
import { FEATURE_STATUSES, type IdMap, type SnapshotDocument, snapshotSchema } from "./snapshot.schema.ts";

/** One fault in a snapshot: `path` like `features[3].column`, `message` for people. */
export interface SnapshotIssue {
  path: string;
  message: string;
}

/** Thrown when a snapshot is refused; `issues` lists every fault found. Nothing was written. */
export class SnapshotValidationError extends Error {
  readonly issues: SnapshotIssue[];

  constructor(issues: SnapshotIssue[]) {
    const lines = issues.map((issue) => `${issue.path}: ${issue.message}`);
    super(`snapshot refused (${issues.length} ${issues.length === 1 ? "fault" : "faults"}):\n${lines.join("\n")}`);
    this.name = "SnapshotValidationError";
    this.issues = issues;
  }
}

/** Renders a zod path as a JSON path: `features[3].column`; the document itself is "(document)". */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (typeof part === "string" && /^[A-Za-z_$][\w$]*$/.test(part)) out += out === "" ? part : `.${part}`;
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out === "" ? "(document)" : out;
}

function zodIssues(error: z.ZodError): SnapshotIssue[] {
  return error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
}

/**
 * Parses and checks a snapshot. Returns the document with every default filled in (positions,
 * board and release slugs, custom-board feature status included); throws SnapshotValidationError
 * listing every fault. Does not look at the database (importSnapshot checks slug, key and token
 * collisions inside its transaction).
 */
export function validateSnapshot(input: unknown): SnapshotDocument {
  const parsed = snapshotSchema.safeParse(input);
  if (!parsed.success) throw new SnapshotValidationError(zodIssues(parsed.error));
  const doc = parsed.data;
  const issues = checkReferences(doc);
  if (issues.length > 0) throw new SnapshotValidationError(issues);
  fillDerivedDefaults(doc);
  return doc;
}

/** Index of every ref in a list, reporting a duplicate at its second occurrence. */
function indexRefs(
  items: ReadonlyArray<{ ref: string; path: string }>,
  issues: SnapshotIssue[],
): Map<string, number> {
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const first = seen.get(item.ref);
    if (first === undefined) seen.set(item.ref, index);
    else issues.push({ path: `${item.path}.ref`, message: `duplicate ref "${item.ref}" (first at ${items[first]!.path})` });
  });
  return seen;
}

function listed<T extends { ref: string }>(list: T[], name: string) {
  return list.map((item, index) => ({ ref: item.ref, path: `${name}[${index}]` }));
}

/** Every cross-object rule of the spec; returns the faults (empty when the file is sound). */
export function checkReferences(doc: SnapshotDocument): SnapshotIssue[] {
  const issues: SnapshotIssue[] = [];
  const fault = (path: string, message: string) => issues.push({ path, message });

  // Keys are unique across all projects in the database; two equal keys can never both be stored.
  const keySeen = new Map<string, number>();
  doc.keys.forEach((key, i) => {
    const first = keySeen.get(key.key);
    if (first !== undefined) fault(`keys[${i}].key`, `same key as keys[${first}]`);
    else keySeen.set(key.key, i);
  });

  const tags = indexRefs(listed(doc.tags, "tags"), issues);
  const tiers = indexRefs(listed(doc.tiers, "tiers"), issues);
  const boards = indexRefs(listed(doc.boards, "boards"), issues);
  // Features name a column by ref alone, so column refs are unique across every board.
  const columnItems = doc.boards.flatMap((board, b) =>
    board.columns.map((column, c) => ({ ref: column.ref, path: `boards[${b}].columns[${c}]`, board: b, column })),
  );
  const columns = indexRefs(columnItems, issues);
  const voters = indexRefs(listed(doc.voters, "voters"), issues);
  const features = indexRefs(listed(doc.features, "features"), issues);
  const comments = indexRefs(listed(doc.comments, "comments"), issues);
  indexRefs(listed(doc.releases, "releases"), issues);
  const messages = indexRefs(listed(doc.messages, "messages"), issues);

  const resolve = (map: Map<string, number>, kind: string, value: string, path: string) => {
    const index = map.get(value);
    if (index === undefined) fault(path, `no ${kind} with ref "${value}"`);
    return index;
  };

  checkBoards(doc, fault);
  checkVoters(doc, tiers, resolve, fault);

  doc.features.forEach((feature, i) => {
    const path = `features[${i}]`;
    const boardIndex = resolve(boards, "board", feature.board, `${path}.board`);
    const board = boardIndex === undefined ? undefined : doc.boards[boardIndex];
    if (feature.column !== null) {
      const item = columnItems[columns.get(feature.column) ?? -1];
      if (board && (!item || item.board !== boardIndex)) {
        fault(`${path}.column`, `no column "${feature.column}" on board "${board.ref}"`);
      } else if (!board && !item) {
        fault(`${path}.column`, `no column with ref "${feature.column}"`);
      } else if (board?.kind === "roadmap" && item && feature.status !== null && feature.status !== "archived"
        && feature.status !== item.column.status) {
        fault(`${path}.status`, `a roadmap feature takes its status from its column ("${item.column.status}"); leave it null`);
      }
    } else if (feature.status !== "archived") {
      fault(`${path}.column`, `required unless status is "archived"`);
    }
    if (feature.author !== null) resolve(voters, "voter", feature.author, `${path}.author`);
    if (feature.linked_feature !== null) {
      if (feature.linked_feature === feature.ref) fault(`${path}.linked_feature`, "a feature cannot be a duplicate of itself");
      else resolve(features, "feature", feature.linked_feature, `${path}.linked_feature`);
    }
    const seenTags = new Set<string>();
    feature.tags.forEach((tag, t) => {
      if (seenTags.has(tag)) fault(`${path}.tags[${t}]`, `tag "${tag}" listed twice`);
      seenTags.add(tag);
      resolve(tags, "tag", tag, `${path}.tags[${t}]`);
    });
  });

  const pairs = (name: string, left: string, right: string) => {
    const seen = new Map<string, number>();
    return (i: number, a: string, b: string) => {
      const key = JSON.stringify([a, b]);
      const first = seen.get(key);
      if (first !== undefined) fault(`${name}[${i}]`, `${left} "${a}" already has a ${name.slice(0, -1)} on ${right} "${b}" (${name}[${first}])`);
      else seen.set(key, i);
    };
  };

  const votePair = pairs("votes", "voter", "feature");
  doc.votes.forEach((vote, i) => {
    const v = resolve(voters, "voter", vote.voter, `votes[${i}].voter`);
    const f = resolve(features, "feature", vote.feature, `votes[${i}].feature`);
    if (v !== undefined && f !== undefined) votePair(i, vote.voter, vote.feature);
  });

  doc.comments.forEach((comment, i) => {
    const path = `comments[${i}]`;
    resolve(features, "feature", comment.feature, `${path}.feature`);
    resolve(voters, "voter", comment.voter, `${path}.voter`);
    if (comment.parent === null) return;
    const parentIndex = resolve(comments, "comment", comment.parent, `${path}.parent`);
    const parent = parentIndex === undefined ? undefined : doc.comments[parentIndex];
    if (!parent) return;
    if (parent.ref === comment.ref) fault(`${path}.parent`, "a comment cannot reply to itself");
    else if (parent.parent !== null) fault(`${path}.parent`, `comment "${parent.ref}" is a reply; replies are one level deep`);
    else if (parent.feature !== comment.feature) {
      fault(`${path}.parent`, `comment "${parent.ref}" belongs to feature "${parent.feature}", not "${comment.feature}"`);
    }
  });

  const likePair = pairs("likes", "voter", "comment");
  doc.likes.forEach((like, i) => {
    const v = resolve(voters, "voter", like.voter, `likes[${i}].voter`);
    const c = resolve(comments, "comment", like.comment, `likes[${i}].comment`);
    if (v !== undefined && c !== undefined) likePair(i, like.voter, like.comment);
  });

  doc.releases.forEach((release, i) => {
    const seen = new Set<string>();
    release.features.forEach((entry, j) => {
      const path = `releases[${i}].features[${j}].feature`;
      if (seen.has(entry.feature)) fault(path, `feature "${entry.feature}" listed twice in this release`);
      seen.add(entry.feature);
      resolve(features, "feature", entry.feature, path);
    });
  });

  doc.messages.forEach((message, i) => {
    const path = `messages[${i}]`;
    if (message.action_label !== null && message.action_url === null) {
      fault(`${path}.action_label`, "only allowed together with action_url");
    }
    if (message.platforms && new Set(message.platforms).size !== message.platforms.length) {
      fault(`${path}.platforms`, "names a platform twice");
    }
    if (message.min_app_version && message.max_app_version
      && semver.gt(message.min_app_version, message.max_app_version)) {
      fault(`${path}.min_app_version`, `is above max_app_version (${message.max_app_version})`);
    }
    if (message.starts_at && message.ends_at && Date.parse(message.starts_at) > Date.parse(message.ends_at)) {
      fault(`${path}.ends_at`, "is before starts_at");
    }
  });

  const dismissalPair = pairs("dismissals", "voter", "message");
  doc.dismissals.forEach((dismissal, i) => {
    const v = resolve(voters, "voter", dismissal.voter, `dismissals[${i}].voter`);
    const m = resolve(messages, "message", dismissal.message, `dismissals[${i}].message`);
    if (v !== undefined && m !== undefined) dismissalPair(i, dismissal.voter, dismissal.message);
  });

  return issues;
}

type Fault = (path: string, message: string) => void;

function checkBoards(doc: SnapshotDocument, fault: Fault) {
  const roadmaps = doc.boards.flatMap((board, i) => (board.kind === "roadmap" ? [i] : []));
  if (roadmaps.length === 0) fault("boards", `exactly one board of kind "roadmap" is required, found none`);
  for (const extra of roadmaps.slice(1)) fault(`boards[${extra}].kind`, `a second roadmap (the first is boards[${roadmaps[0]}])`);

  const slugs = new Map<string, number>();
  doc.boards.forEach((board, b) => {
    const slug = board.slug ?? (board.kind === "roadmap" ? "roadmap" : board.ref);
    // The API reads board=roadmap as "the roadmap", so a custom board cannot take that name.
    if (board.kind === "custom" && slug === "roadmap") fault(`boards[${b}].slug`, `"roadmap" is reserved for the roadmap`);
    const first = slugs.get(slug);
    if (first !== undefined) fault(`boards[${b}].slug`, `board slug "${slug}" already used by boards[${first}]`);
    else slugs.set(slug, b);

    board.columns.forEach((column, c) => {
      const path = `boards[${b}].columns[${c}].status`;
      if (board.kind === "roadmap") {
        if (column.status === null) fault(path, "a roadmap column must carry a status");
        else if (!(FEATURE_STATUSES as readonly string[]).includes(column.status)) {
          fault(path, `"${column.status}" is not one of open, planned, in_progress, done, denied, archived`);
        }
      } else if (column.status !== null) {
        fault(path, "a custom board column has no status; leave it null");
      }
    });
  });
}

function checkVoters(
  doc: SnapshotDocument,
  tiers: Map<string, number>,
  resolve: (map: Map<string, number>, kind: string, value: string, path: string) => number | undefined,
  fault: Fault,
) {
  const ssoIds = new Map<string, number>();
  const anonTokens = new Map<string, number>();
  doc.voters.forEach((voter, i) => {
    const path = `voters[${i}]`;
    if (voter.tier !== null) resolve(tiers, "tier", voter.tier, `${path}.tier`);
    if (voter.kind === "sso") {
      if (voter.sso_id === null) fault(`${path}.sso_id`, "required for an sso voter");
      if (voter.anon_token !== null) fault(`${path}.anon_token`, "an sso voter has no anonymous token");
    } else if (voter.sso_id !== null) {
      fault(`${path}.sso_id`, "only an sso voter has an sso_id");
    }
    if (voter.sso_id !== null) {
      const first = ssoIds.get(voter.sso_id);
      if (first !== undefined) fault(`${path}.sso_id`, `sso_id "${voter.sso_id}" already used by voters[${first}]`);
      else ssoIds.set(voter.sso_id, i);
    }
    if (voter.anon_token !== null) {
      const first = anonTokens.get(voter.anon_token);
      if (first !== undefined) fault(`${path}.anon_token`, `same token as voters[${first}]`);
      else anonTokens.set(voter.anon_token, i);
    }
  });
}

/** Release slug from its name when the file gives none: "Version 1.4" -> "version-1-4". */
export function slugify(name: string): string {
  const slug = name.toLowerCase().normalize("NFKD").replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
  return slug === "" ? "release" : slug;
}

/** Fills the defaults that depend on other parts of the document (positions, slugs, status). */
function fillDerivedDefaults(doc: SnapshotDocument) {
  const boardKind = new Map(doc.boards.map((board) => [board.ref, board.kind]));
  for (const board of doc.boards) {
    board.slug ??= board.kind === "roadmap" ? "roadmap" : board.ref;
    board.columns.forEach((column, index) => {
      column.position ??= index;
    });
  }
  const perBoard = new Map<string, number>();
  for (const feature of doc.features) {
    const next = perBoard.get(feature.board) ?? 0;
    perBoard.set(feature.board, next + 1);
    feature.position ??= next;
    if (boardKind.get(feature.board) === "custom") feature.status ??= "open";
  }
  for (const release of doc.releases) release.slug ??= slugify(release.name);
}

/** Options of importSnapshot. */
export interface ImportOptions {
  /** Delete an existing project with the same slug first (same transaction); default false. */
  replace?: boolean;
}

/**
 * Imports a whole project (spec/project-snapshot.md). `input` is the parsed JSON document.
 * Validates everything first, then writes in one transaction: with `replace`, an existing project
 * of that slug is deleted inside it (rows cascade). Stored counters (vote_count, weighted_score,
 * trending_score, comment_count, like_count, voters.vote_count, projects.voter_count) are computed
 * in SQL from the imported rows. Returns the id map of the spec's "Id map" section.
 * Throws SnapshotValidationError (nothing written) for a bad file, an existing slug without
 * `replace`, or a key or anonymous token that another project already holds.
 */
export async function importSnapshot(
  db: Kysely<Database>,
  input: unknown,
  options: ImportOptions = {},
): Promise<IdMap> {
  const doc = validateSnapshot(input);
  const replace = options.replace === true;
  return db.transaction().execute(async (trx) => {
    const replaced = await checkAgainstDatabase(trx, doc, replace);
    // Every table cascades from projects. (Large projects delete slowly until the FK columns
    // features.linked_feature_id/author_voter_id and comments/likes/dismissals.voter_id are indexed.)
    if (replaced !== undefined) await trx.deleteFrom("projects").where("id", "=", replaced).execute();
    return writeProject(trx, doc, new Date().toISOString());
  });
}

type Trx = Transaction<Database>;

/**
 * Faults only the database can reveal: an existing slug, keys or tokens of other projects.
 * Returns the id of the project that `replace` will delete, if any.
 */
async function checkAgainstDatabase(trx: Trx, doc: SnapshotDocument, replace: boolean): Promise<number | undefined> {
  const issues: SnapshotIssue[] = [];
  const slug = doc.project.slug;
  const existing = await trx.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirst();
  if (existing && !replace) {
    issues.push({ path: "project.slug", message: `project "${slug}" already exists; import with --replace to overwrite it` });
  }
  // Rows of the project being replaced are deleted before the inserts, so they do not collide.
  const ownId = existing?.id ?? -1;

  const keyHashes = new Map(doc.keys.map((key, i) => [hashSecret(key.key), i]));
  for (const chunk of chunks([...keyHashes.keys()], 10_000)) {
    const taken = await trx.selectFrom("api_keys").select("key_hash")
      .where("key_hash", "in", chunk).where("project_id", "<>", ownId).execute();
    for (const row of taken) {
      issues.push({ path: `keys[${keyHashes.get(row.key_hash)}].key`, message: "already in use by another project" });
    }
  }
  const tokenHashes = new Map<string, number>();
  doc.voters.forEach((voter, i) => {
    if (voter.anon_token !== null) tokenHashes.set(hashSecret(voter.anon_token), i);
  });
  for (const chunk of chunks([...tokenHashes.keys()], 10_000)) {
    const taken = await trx.selectFrom("voters").select("anon_token_hash")
      .where("anon_token_hash", "in", chunk).where("project_id", "<>", ownId).execute();
    for (const row of taken) {
      issues.push({
        path: `voters[${tokenHashes.get(row.anon_token_hash!)}].anon_token`,
        message: "already the token of a voter in another project",
      });
    }
  }
  if (issues.length > 0) throw new SnapshotValidationError(issues);
  return existing?.id;
}

function chunks<T>(rows: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/**
 * Runs `insert` over slices of `rows` sized to stay well under Postgres's 65,535 bind
 * parameters per statement, and concatenates what each slice returned (in insertion order).
 */
async function insertInChunks<Row extends object, Out>(
  rows: Row[],
  insert: (chunk: Row[]) => Promise<Out[]>,
): Promise<Out[]> {
  if (rows.length === 0) return [];
  const columns = Object.keys(rows[0]!).length;
  const size = Math.max(1, Math.min(5_000, Math.floor(30_000 / columns)));
  const out: Out[] = [];
  for (const chunk of chunks(rows, size)) {
    const returned = await insert(chunk);
    for (const row of returned) out.push(row);
  }
  return out;
}

/**
 * Inserts rows without returning anything, one array parameter per column expanded by
 * unnest(): for the big link tables (votes, likes) this is about twice as fast as multi-row
 * VALUES, and a chunk of 20,000 rows still binds only a handful of parameters.
 */
async function insertUnnest<Row extends Record<string, unknown>>(
  trx: Trx,
  table: keyof Database,
  types: { [K in keyof Row]: "int" | "text" | "timestamptz" },
  rows: Row[],
) {
  const names = Object.keys(types) as Array<keyof Row & string>;
  for (const chunk of chunks(rows, 20_000)) {
    const arrays = names.map((name) => sql`${chunk.map((row) => row[name])}::${sql.raw(types[name])}[]`);
    await sql`INSERT INTO ${sql.table(table)} (${sql.join(names.map((name) => sql.ref(name)))})
      SELECT * FROM unnest(${sql.join(arrays)})`.execute(trx);
  }
}

/** ref -> id, checking that the insert gave back one id per row. */
function zipIds<T>(refs: string[], returned: T[], table: string): Map<string, T> {
  if (refs.length !== returned.length) {
    throw new Error(`import: ${table} returned ${returned.length} ids for ${refs.length} rows`);
  }
  return new Map(refs.map((ref, i) => [ref, returned[i]!]));
}

function need<T>(map: Map<string, T>, ref: string): T {
  const value = map.get(ref);
  // Validation resolved every ref already; reaching this is a bug in the importer.
  if (value === undefined) throw new Error(`import: unresolved ref "${ref}"`);
  return value;
}

async function writeProject(trx: Trx, doc: SnapshotDocument, now: string): Promise<IdMap> {
  const p = doc.project;
  const { id: projectId } = await trx.insertInto("projects").values({
    slug: p.slug, name: p.name, description: p.description, logo_url: p.logo_url, banner_url: p.banner_url,
    currency_symbol: p.currency_symbol, show_branding: p.show_branding, is_private: p.is_private,
    plan: p.plan, sso_secret: p.sso_secret, allowed_origins: p.allowed_origins,
    // Objects, not JSON text: postgres-js would store a string parameter as a jsonb string.
    settings: p.settings, theme: p.theme, created_at: now, updated_at: now,
  }).returning("id").executeTakeFirstOrThrow();

  await insertUnnest(trx, "api_keys", { project_id: "int", kind: "text", key_hash: "text", created_at: "timestamptz" },
    doc.keys.map((key) => ({ project_id: projectId, kind: key.kind, key_hash: hashSecret(key.key), created_at: now })));

  const tagIds = zipIds(doc.tags.map((t) => t.ref), await insertInChunks(
    doc.tags.map((tag) => ({ project_id: projectId, name: tag.name })),
    (chunk) => trx.insertInto("tags").values(chunk).returning("id").execute(),
  ), "tags");

  const tierIds = zipIds(doc.tiers.map((t) => t.ref), await insertInChunks(
    doc.tiers.map((tier) => ({ project_id: projectId, name: tier.name, mrr_cents: tier.mrr_cents, multiplier: tier.multiplier })),
    (chunk) => trx.insertInto("tiers").values(chunk).returning("id").execute(),
  ), "tiers");
  const multiplierOfTier = new Map(doc.tiers.map((tier) => [tier.ref, tier.multiplier]));

  const boardIds = zipIds(doc.boards.map((b) => b.ref), await insertInChunks(
    doc.boards.map((board, index) => ({
      project_id: projectId, kind: board.kind, name: board.name, slug: board.slug!, position: index,
    })),
    (chunk) => trx.insertInto("boards").values(chunk).returning("id").execute(),
  ), "boards");

  const columnList = doc.boards.flatMap((board) => board.columns.map((column) => ({ board, column })));
  const columnIds = zipIds(columnList.map((c) => c.column.ref), await insertInChunks(
    columnList.map(({ board, column }) => ({
      project_id: projectId, board_id: need(boardIds, board.ref).id, name: column.name, color: column.color,
      position: column.position ?? 0, is_votable: column.is_votable, status: column.status,
    })),
    (chunk) => trx.insertInto("columns").values(chunk).returning("id").execute(),
  ), "columns");
  const columnStatus = new Map(columnList.map(({ column }) => [column.ref, column.status]));

  const voterIds = zipIds(doc.voters.map((v) => v.ref), await insertInChunks(
    doc.voters.map((v) => ({
      public_id: generateVoterId(), project_id: projectId, kind: v.kind,
      anon_token_hash: v.anon_token === null ? null : hashSecret(v.anon_token), sso_id: v.sso_id,
      display_name: v.display_name ?? generateHandle(), email: v.email, role: v.role, banned: v.banned,
      company: v.company, tier_id: v.tier === null ? null : need(tierIds, v.tier).id,
      mrr_override_cents: v.mrr_override_cents, stripe_customer_id: v.stripe_customer_id,
      paddle_customer_id: v.paddle_customer_id, subscription_id: v.subscription_id,
      subscription_status: v.subscription_status, subscribed_at: v.subscribed_at, trial_ends_at: v.trial_ends_at,
      canceled_at: v.canceled_at, last_synced_at: v.last_synced_at, churned: v.churned, churned_at: v.churned_at,
      churn_source: v.churn_source, created_at: v.created_at ?? now, updated_at: v.created_at ?? now,
    })),
    (chunk) => trx.insertInto("voters").values(chunk).returning(["id", "public_id"]).execute(),
  ), "voters");
  const weightOfVoter = new Map(doc.voters.map((v) => [v.ref, v.tier === null ? 1 : multiplierOfTier.get(v.tier) ?? 1]));

  const boardKind = new Map(doc.boards.map((board) => [board.ref, board.kind]));
  const featureIds = zipIds(doc.features.map((f) => f.ref), await insertInChunks(
    doc.features.map((f) => {
      const archived = f.status === "archived";
      // Roadmap features report their column's status (spec, "Document", features.status).
      const status = archived ? "archived"
        : boardKind.get(f.board) === "roadmap" ? columnStatus.get(f.column!)! : f.status ?? "open";
      return {
        project_id: projectId, board_id: need(boardIds, f.board).id,
        column_id: archived || status === "archived" || f.column === null ? null : need(columnIds, f.column).id,
        status, heading: f.heading, description: f.description,
        author_voter_id: f.author === null ? null : need(voterIds, f.author).id,
        is_approved: f.is_approved, is_pinned: f.is_pinned, position: f.position ?? 0, progress: f.progress,
        view_count: f.view_count, effort: f.effort, developer_response: f.developer_response,
        response_is_denial: f.response_is_denial, linked_feature_id: null, start_date: f.start_date,
        target_date: f.target_date, created_at: f.created_at ?? now, updated_at: f.updated_at ?? now,
      };
    }),
    (chunk) => trx.insertInto("features").values(chunk).returning("id").execute(),
  ), "features");

  // Duplicates may point forward in the file, so links are set once every feature has an id.
  const links = doc.features.filter((f) => f.linked_feature !== null)
    .map((f) => [need(featureIds, f.ref).id, need(featureIds, f.linked_feature!).id] as const);
  for (const chunk of chunks(links, 5_000)) {
    const values = sql.join(chunk.map(([id, linked]) => sql`(${id}::int, ${linked}::int)`));
    await sql`UPDATE features AS f SET linked_feature_id = v.linked
      FROM (VALUES ${values}) AS v(id, linked) WHERE f.id = v.id`.execute(trx);
  }

  await insertUnnest(trx, "feature_tags", { feature_id: "int", tag_id: "int" },
    doc.features.flatMap((f) => f.tags.map((tag) => ({ feature_id: need(featureIds, f.ref).id, tag_id: need(tagIds, tag).id }))));

  await insertUnnest(
    trx, "votes", { feature_id: "int", voter_id: "int", project_id: "int", weight: "int", created_at: "timestamptz" },
    doc.votes.map((vote) => ({
      feature_id: need(featureIds, vote.feature).id, voter_id: need(voterIds, vote.voter).id,
      project_id: projectId, weight: need(weightOfVoter, vote.voter), created_at: vote.created_at ?? now,
    })),
  );

  // Top-level comments first, so every reply's parent already has an id.
  const commentIds = new Map<string, { id: number }>();
  for (const level of [doc.comments.filter((c) => c.parent === null), doc.comments.filter((c) => c.parent !== null)]) {
    const ids = zipIds(level.map((c) => c.ref), await insertInChunks(
      level.map((c) => ({
        project_id: projectId, feature_id: need(featureIds, c.feature).id,
        parent_id: c.parent === null ? null : need(commentIds, c.parent).id,
        voter_id: need(voterIds, c.voter).id, content: c.content, created_at: c.created_at ?? now,
      })),
      (chunk) => trx.insertInto("comments").values(chunk).returning("id").execute(),
    ), "comments");
    for (const [ref, id] of ids) commentIds.set(ref, id);
  }

  await insertUnnest(trx, "comment_likes", { comment_id: "int", voter_id: "int", created_at: "timestamptz" },
    doc.likes.map((like) => ({
      comment_id: need(commentIds, like.comment).id, voter_id: need(voterIds, like.voter).id, created_at: now,
    })));

  const releaseIds = zipIds(doc.releases.map((r) => r.ref), await insertInChunks(
    doc.releases.map((r) => ({
      project_id: projectId, name: r.name, slug: r.slug!, body: r.body, body_html: renderMarkdown(r.body),
      is_featured: r.is_featured, published_at: r.published_at, view_count: r.view_count, created_at: now,
    })),
    (chunk) => trx.insertInto("releases").values(chunk).returning("id").execute(),
  ), "releases");

  await insertUnnest(trx, "release_features", { release_id: "int", feature_id: "int", changelog_type: "text", position: "int" },
    doc.releases.flatMap((r) => r.features.map((entry, position) => ({
      release_id: need(releaseIds, r.ref).id, feature_id: need(featureIds, entry.feature).id,
      changelog_type: entry.changelog_type, position,
    }))));

  const messageIds = zipIds(doc.messages.map((m) => m.ref), await insertInChunks(
    doc.messages.map((m) => ({
      project_id: projectId, title: m.title, body: m.body, kind: m.kind, presentation: m.presentation,
      priority: m.priority, action_label: m.action_label, action_url: m.action_url,
      is_dismissible: m.is_dismissible, platforms: m.platforms, min_app_version: m.min_app_version,
      max_app_version: m.max_app_version, starts_at: m.starts_at, ends_at: m.ends_at,
      // The format carries no updated_at; taking created_at keeps an export round trip stable.
      created_at: m.created_at ?? now, updated_at: m.created_at ?? now,
    })),
    (chunk) => trx.insertInto("messages").values(chunk).returning("id").execute(),
  ), "messages");

  await insertUnnest(trx, "message_dismissals", { message_id: "int", voter_id: "int", created_at: "timestamptz" },
    doc.dismissals.map((d) => ({
      message_id: need(messageIds, d.message).id, voter_id: need(voterIds, d.voter).id, created_at: now,
    })));

  await computeCounters(trx, projectId);

  const ids = <T, V>(map: Map<string, T>, pick: (value: T) => V) =>
    Object.fromEntries([...map].map(([ref, value]) => [ref, pick(value)]));
  return {
    project: { slug: p.slug },
    ids: {
      // The API addresses the roadmap as board 0 (contract, BoardEntry.id), not by its row id.
      boards: Object.fromEntries(doc.boards.map((b) => [b.ref, b.kind === "roadmap" ? 0 : need(boardIds, b.ref).id])),
      columns: ids(columnIds, (row) => row.id),
      tags: ids(tagIds, (row) => row.id),
      tiers: ids(tierIds, (row) => row.id),
      voters: ids(voterIds, (row) => row.public_id),
      features: ids(featureIds, (row) => row.id),
      comments: ids(commentIds, (row) => row.id),
      releases: ids(releaseIds, (row) => row.id),
      messages: ids(messageIds, (row) => row.id),
    },
  };
}

/**
 * Stored counters from the imported rows, in SQL (design.md, "Data rules"). trending_score is
 * ln(sum(exp(x))) over the feature's votes, evaluated as max(x) + ln(sum(exp(x - max(x)))) so
 * exp never overflows; features without votes keep NULL, like the live write path.
 */
async function computeCounters(trx: Trx, projectId: number) {
  const x = voteExponent(sql.ref("created_at"));
  await sql`UPDATE features AS f
    SET vote_count = s.n, weighted_score = s.w, trending_score = s.top + ln(s.spread)
    FROM (
      SELECT feature_id, count(*)::int AS n, sum(weight)::int AS w, max(top) AS top, sum(exp(x - top)) AS spread
      FROM (
        SELECT feature_id, weight, x, max(x) OVER (PARTITION BY feature_id) AS top
        FROM (SELECT feature_id, weight, ${x} AS x FROM votes WHERE project_id = ${projectId}) AS raw
      ) AS v
      GROUP BY feature_id
    ) AS s
    WHERE f.id = s.feature_id`.execute(trx);
  await sql`UPDATE features AS f SET comment_count = s.n
    FROM (SELECT feature_id, count(*)::int AS n FROM comments WHERE project_id = ${projectId} GROUP BY feature_id) AS s
    WHERE f.id = s.feature_id`.execute(trx);
  await sql`UPDATE comments AS c SET like_count = s.n
    FROM (
      SELECT l.comment_id, count(*)::int AS n FROM comment_likes AS l
      JOIN comments AS lc ON lc.id = l.comment_id
      WHERE lc.project_id = ${projectId} GROUP BY l.comment_id
    ) AS s
    WHERE c.id = s.comment_id`.execute(trx);
  await sql`UPDATE voters AS v SET vote_count = s.n
    FROM (SELECT voter_id, count(*)::int AS n FROM votes WHERE project_id = ${projectId} GROUP BY voter_id) AS s
    WHERE v.id = s.voter_id`.execute(trx);
  await sql`UPDATE projects SET voter_count =
      (SELECT count(DISTINCT voter_id)::int FROM votes WHERE project_id = ${projectId})
    WHERE id = ${projectId}`.execute(trx);
}
