/**
 * Snapshot rules about boards (one roadmap, slugs, column statuses), voters (tier refs, sso_id
 * versus anon_token, both unique) and messages (action, platforms, version and date ranges), from
 * spec/project-snapshot.md, "Document"; plus the small helpers every rule shares.
 */
import semver from "semver";
import { FEATURE_STATUSES, type SnapshotDocument } from "./snapshot.schema.ts";

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

/**
 * Tiers resolve; an sso voter has an sso_id and no anon_token, an anonymous one no sso_id; sso
 * ids and anonymous tokens are unique within the file (importSnapshot checks the tokens against
 * other projects).
 */
export function checkVoters(doc: SnapshotDocument, tiers: Map<string, number>, resolve: Resolve, fault: Fault) {
  const ssoIds = new FirstSeen<string>();
  const anonTokens = new FirstSeen<string>();
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
      const first = ssoIds.add(voter.sso_id, i);
      if (first !== undefined) fault(`${path}.sso_id`, `sso_id "${voter.sso_id}" already used by voters[${first}]`);
    }
    if (voter.anon_token !== null) {
      const first = anonTokens.add(voter.anon_token, i);
      if (first !== undefined) fault(`${path}.anon_token`, `same token as voters[${first}]`);
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
    if (message.min_app_version && message.max_app_version
      && semver.gt(message.min_app_version, message.max_app_version)) {
      fault(`${path}.min_app_version`, `is above max_app_version (${message.max_app_version})`);
    }
    if (message.starts_at && message.ends_at && Date.parse(message.starts_at) > Date.parse(message.ends_at)) {
      fault(`${path}.ends_at`, "is before starts_at");
    }
  });
}
