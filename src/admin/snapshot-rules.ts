/**
 * Snapshot rules about boards (one roadmap, slugs, column statuses), voters (tier refs, sso_id
 * versus anon_token, both unique) and messages (action, platforms, version and date ranges), from
 * docs/contract/project-snapshot.md, "Document"; plus the small helpers every rule shares.
 */
import semver from "semver";
import { FEATURE_STATUSES } from "../contract/enums.ts";
import { hashSecret } from "../lib/rules/secrets.ts";
import { INT4_MAX, type SnapshotDocument } from "./snapshot.schema.ts";

/** One fault in a snapshot: `path` like `features[3].column`, `message` for people. */
export interface SnapshotIssue {
  path: string;
  message: string;
}

/** Records one fault at a JSON path such as `boards[1].slug`. */
export type Fault = (path: string, message: string) => void;

/**
 * Looks `value` up in a ref index (ref -> position in its list); records `no <kind> with ref
 * "<value>"` at `path` and returns undefined when it is not there.
 */
export type Resolve = (map: Map<string, number>, kind: string, value: string, path: string) => number | undefined;

/**
 * The first index each key was seen at, for every "must be unique" rule. `add(key, index)`
 * records a new key and returns undefined, or returns the first index when the key is a repeat.
 */
export class FirstSeen<K> {
  readonly first = new Map<K, number>();

  add(key: K, index: number): number | undefined {
    const first = this.first.get(key);
    if (first === undefined) this.first.set(key, index);
    return first;
  }
}

/**
 * A board's slug when the file gives none: "roadmap" for the roadmap, else its ref. One rule for
 * the slug checks and for the default that validateSnapshot stores, so the two cannot drift.
 */
export function boardSlug(board: SnapshotDocument["boards"][number]): string {
  return board.slug ?? (board.kind === "roadmap" ? "roadmap" : board.ref);
}

/** Exactly one roadmap, unique board slugs, a status on every roadmap column and on no other. */
export function checkBoards(doc: SnapshotDocument, fault: Fault) {
  const roadmaps = doc.boards.flatMap((board, i) => (board.kind === "roadmap" ? [i] : []));
  if (roadmaps.length === 0) fault("boards", `exactly one board of kind "roadmap" is required, found none`);
  for (const extra of roadmaps.slice(1)) fault(`boards[${extra}].kind`, `a second roadmap (the first is boards[${roadmaps[0]}])`);

  const slugs = new FirstSeen<string>();
  doc.boards.forEach((board, b) => {
    const slug = boardSlug(board);
    // The API reads board=roadmap as "the roadmap", so a custom board cannot take that name.
    if (board.kind === "custom" && slug === "roadmap") fault(`boards[${b}].slug`, `"roadmap" is reserved for the roadmap`);
    const first = slugs.add(slug, b);
    if (first !== undefined) fault(`boards[${b}].slug`, `board slug "${slug}" already used by boards[${first}]`);

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

/** The digest stored for a key: `key_sha256` as given, else the SHA-256 of the plaintext. */
export function keyDigest(key: SnapshotDocument["keys"][number]): string {
  return key.key_sha256 ?? hashSecret(key.key!);
}

/** The JSON path field a key was given by: `key` or `key_sha256`. */
export function keyField(key: SnapshotDocument["keys"][number]): "key" | "key_sha256" {
  return key.key_sha256 === undefined ? "key" : "key_sha256";
}

/** The digest stored for a voter's anonymous token (null without one), and the field it came from. */
export function anonTokenDigest(
  voter: SnapshotDocument["voters"][number],
): { digest: string; field: "anon_token" | "anon_token_sha256" } | null {
  if (voter.anon_token_sha256 !== null) return { digest: voter.anon_token_sha256, field: "anon_token_sha256" };
  if (voter.anon_token !== null) return { digest: hashSecret(voter.anon_token), field: "anon_token" };
  return null;
}

/**
 * Tiers resolve; an sso voter has an sso_id and no anonymous token, an anonymous one no sso_id;
 * a token is given as anon_token or anon_token_sha256, not both; sso ids, token digests and
 * voter_ids are unique within the file (importSnapshot checks tokens and voter_ids against other
 * projects).
 */
export function checkVoters(doc: SnapshotDocument, tiers: Map<string, number>, resolve: Resolve, fault: Fault) {
  const ssoIds = new FirstSeen<string>();
  const anonTokens = new FirstSeen<string>();
  const voterIds = new FirstSeen<string>();
  doc.voters.forEach((voter, i) => {
    const path = `voters[${i}]`;
    if (voter.tier !== null) resolve(tiers, "tier", voter.tier, `${path}.tier`);
    if (voter.anon_token !== null && voter.anon_token_sha256 !== null) {
      fault(`${path}.anon_token_sha256`, "give anon_token or anon_token_sha256, not both");
    }
    const token = anonTokenDigest(voter);
    if (voter.kind === "sso") {
      // An imported voter waits without one until an SSO token's email claims it (imports-v3.md).
      if (voter.sso_id === null && voter.import_source === null)
        fault(`${path}.sso_id`, "required for an sso voter (not made by an import)");
      if (token !== null) fault(`${path}.${token.field}`, "an sso voter has no anonymous token");
    } else if (voter.sso_id !== null) {
      fault(`${path}.sso_id`, "only an sso voter has an sso_id");
    }
    if (voter.sso_id !== null) {
      const first = ssoIds.add(voter.sso_id, i);
      if (first !== undefined) fault(`${path}.sso_id`, `sso_id "${voter.sso_id}" already used by voters[${first}]`);
    }
    if (token !== null) {
      const first = anonTokens.add(token.digest, i);
      if (first !== undefined) fault(`${path}.${token.field}`, `same token as voters[${first}]`);
    }
    if (voter.voter_id !== undefined) {
      const first = voterIds.add(voter.voter_id, i);
      if (first !== undefined) fault(`${path}.voter_id`, `voter_id "${voter.voter_id}" already used by voters[${first}]`);
    }
  });
}

/** Tables whose rows a snapshot may give database ids for (spec, "Restores" and "Webhooks, merges..."; boards: docs/decisions.md). */
export type IdTable = "boards" | "columns" | "tags" | "tiers" | "features" | "comments" | "releases" | "messages" | "webhooks";

/** Every row of `doc` that may carry an `id`, by table, with its JSON path (`features[3]`). */
export function rowsWithIds(doc: SnapshotDocument): Array<[IdTable, Array<{ id: number | undefined; path: string }>]> {
  const rows = <T extends { id?: number }>(list: T[], name: string) =>
    list.map((item, index) => ({ id: item.id, path: `${name}[${index}]` }));
  return [
    ["boards", rows(doc.boards, "boards")],
    ["columns", doc.boards.flatMap((board, b) => rows(board.columns, `boards[${b}].columns`))],
    ["tags", rows(doc.tags, "tags")],
    ["tiers", rows(doc.tiers, "tiers")],
    ["features", rows(doc.features, "features")],
    ["comments", rows(doc.comments, "comments")],
    ["releases", rows(doc.releases, "releases")],
    ["messages", rows(doc.messages, "messages")],
    ["webhooks", rows(doc.webhooks, "webhooks")],
  ];
}

/**
 * Database ids given in the file (spec, "Restores") are unique within their table: `items` are
 * one table's rows with their JSON paths (columns of every board together).
 */
export function checkIds(items: ReadonlyArray<{ id?: number; path: string }>, fault: Fault) {
  const seen = new FirstSeen<number>();
  items.forEach((item, index) => {
    if (item.id === undefined) return;
    const first = seen.add(item.id, index);
    if (first !== undefined) fault(`${item.path}.id`, `id ${item.id} already used by ${items[first]!.path}`);
  });
}

/**
 * Every feature's weighted score (the sum of its votes' weights, each the voter's tier
 * multiplier) fits the int4 column it is stored in; the vote that would overflow it is named.
 * Runs on resolved refs only (unknown ones are reported elsewhere).
 */
export function checkWeightedScores(doc: SnapshotDocument, fault: Fault) {
  const multiplier = new Map(doc.tiers.map((tier) => [tier.ref, tier.multiplier]));
  const weight = new Map(doc.voters.map((voter) => [voter.ref, voter.tier === null ? 1 : (multiplier.get(voter.tier) ?? 1)]));
  const score = new Map<string, number>();
  const reported = new Set<string>();
  doc.votes.forEach((vote, i) => {
    const total = (score.get(vote.feature) ?? 0) + (weight.get(vote.voter) ?? 1);
    score.set(vote.feature, total);
    if (total > INT4_MAX && !reported.has(vote.feature)) {
      reported.add(vote.feature);
      fault(`votes[${i}]`, `feature "${vote.feature}"'s weighted score would exceed ${INT4_MAX} (a 32-bit integer column)`);
    }
  });
}

/**
 * An action label only with an action URL, no platform twice, min_app_version <= max_app_version
 * (semver) and starts_at <= ends_at.
 */
export function checkMessages(doc: SnapshotDocument, fault: Fault) {
  doc.messages.forEach((message, i) => {
    const path = `messages[${i}]`;
    if (message.action_label !== null && message.action_url === null) {
      fault(`${path}.action_label`, "only allowed together with action_url");
    }
    if (message.platforms && new Set(message.platforms).size !== message.platforms.length) {
      fault(`${path}.platforms`, "names a platform twice");
    }
    if (message.min_app_version && message.max_app_version && semver.gt(message.min_app_version, message.max_app_version)) {
      fault(`${path}.min_app_version`, `is above max_app_version (${message.max_app_version})`);
    }
    if (message.starts_at && message.ends_at && Date.parse(message.starts_at) > Date.parse(message.ends_at)) {
      fault(`${path}.ends_at`, "is before starts_at");
    }
  });
}

/**
 * No two records of one kind name the same import source and source id (imports-v3.md, "How an
 * import runs" rule 4: one record per source id, so a later import updates that record).
 */
export function checkImportSources(doc: SnapshotDocument, fault: Fault) {
  const kinds = {
    boards: doc.boards,
    tags: doc.tags,
    voters: doc.voters,
    features: doc.features,
    votes: doc.votes,
    comments: doc.comments,
    releases: doc.releases,
  };
  for (const [list, records] of Object.entries(kinds)) {
    const seen = new FirstSeen<string>();
    (records as ReadonlyArray<{ import_source: { source: string; id: string } | null }>).forEach((record, index) => {
      if (record.import_source === null) return;
      const first = seen.add(`${record.import_source.source}\n${record.import_source.id}`, index);
      if (first !== undefined) fault(`${list}[${index}].import_source`, `already given by ${list}[${first}]`);
    });
  }
}
