/**
 * The rules of a snapshot that span objects (docs/contract/project-snapshot.md, "Document"): refs
 * unique
 * within their list and resolvable, links (votes, likes, dismissals) once per pair, features in a
 * column of their own board, replies one level deep on their parent's feature. The rules about
 * boards, voters and messages themselves live in snapshot-rules.ts; this module runs them all.
 */
import type { SnapshotDocument } from "./snapshot.schema.ts";
import { checkMerges, checkWebhooks } from "./snapshot-integration-rules.ts";
import {
  checkBoards,
  checkIds,
  checkImportSources,
  checkMessages,
  checkVoters,
  checkWeightedScores,
  type Fault,
  FirstSeen,
  keyDigest,
  keyField,
  type Resolve,
  rowsWithIds,
  type SnapshotIssue,
} from "./snapshot-rules.ts";

/** Ref -> position of its first occurrence in a list; every later occurrence is reported as a duplicate. */
function indexRefs(items: ReadonlyArray<{ ref: string; path: string }>, issues: SnapshotIssue[]): Map<string, number> {
  const seen = new FirstSeen<string>();
  items.forEach((item, index) => {
    const first = seen.add(item.ref, index);
    if (first !== undefined) {
      issues.push({ path: `${item.path}.ref`, message: `duplicate ref "${item.ref}" (first at ${items[first]!.path})` });
    }
  });
  return seen.first;
}

function listed<T extends { ref: string }>(list: T[], name: string) {
  return list.map((item, index) => ({ ref: item.ref, path: `${name}[${index}]` }));
}

/** What the checks take from the environment (the importer's options). */
export interface ReferenceOptions {
  /** Webhook URLs may be http: and IP literals private, as WEBHOOK_ALLOW_PRIVATE_URLS=true allows; default false. */
  allowPrivateWebhookUrls?: boolean;
}

/**
 * Every rule of the spec that the zod shape cannot express, on a document that already has that
 * shape. Returns the faults, list by list in a fixed order (empty when the file is sound).
 */
export function checkReferences(doc: SnapshotDocument, options: ReferenceOptions = {}): SnapshotIssue[] {
  const issues: SnapshotIssue[] = [];
  const fault: Fault = (path, message) => issues.push({ path, message });

  // Keys are unique across all projects in the database; two equal keys can never both be stored
  // (compared by digest, so a plaintext key and its own digest are the same key).
  const keys = new FirstSeen<string>();
  doc.keys.forEach((key, i) => {
    const first = keys.add(keyDigest(key), i);
    if (first !== undefined) fault(`keys[${i}].${keyField(key)}`, `same key as keys[${first}]`);
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

  for (const [, rows] of rowsWithIds(doc)) checkIds(rows, fault);

  const resolve: Resolve = (map, kind, value, path) => {
    const index = map.get(value);
    if (index === undefined) fault(path, `no ${kind} with ref "${value}"`);
    return index;
  };

  /**
   * A link list (votes, likes, dismissals): its voter and its target must resolve, and a voter
   * links a target once; the repeat is reported at the row, naming the first (`votes[4]`).
   */
  const checkLinks = <K extends string>(
    name: string,
    rows: ReadonlyArray<{ voter: string } & Record<K, string>>,
    target: K,
    targets: Map<string, number>,
  ) => {
    const pairs = new FirstSeen<string>();
    rows.forEach((row, i) => {
      const v = resolve(voters, "voter", row.voter, `${name}[${i}].voter`);
      const t = resolve(targets, target, row[target], `${name}[${i}].${target}`);
      if (v === undefined || t === undefined) return;
      const first = pairs.add(JSON.stringify([row.voter, row[target]]), i);
      if (first !== undefined) {
        fault(`${name}[${i}]`, `voter "${row.voter}" already has a ${name.slice(0, -1)} on ${target} "${row[target]}" (${name}[${first}])`);
      }
    });
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
      } else if (
        board?.kind === "roadmap" &&
        item &&
        feature.status !== null &&
        feature.status !== "archived" &&
        feature.status !== item.column.status
      ) {
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
    const featureTags = new FirstSeen<string>();
    feature.tags.forEach((tag, t) => {
      if (featureTags.add(tag, t) !== undefined) fault(`${path}.tags[${t}]`, `tag "${tag}" listed twice`);
      resolve(tags, "tag", tag, `${path}.tags[${t}]`);
    });
  });

  checkLinks("votes", doc.votes, "feature", features);
  const columnBoard = new Map(columnItems.map((item) => [item.ref, item.board]));
  checkMerges(doc, { features, voters, columnBoard, boards }, resolve, fault);
  checkWeightedScores(doc, fault);

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

  checkLinks("likes", doc.likes, "comment", comments);

  doc.releases.forEach((release, i) => {
    const entries = new FirstSeen<string>();
    release.features.forEach((entry, j) => {
      const path = `releases[${i}].features[${j}].feature`;
      if (entries.add(entry.feature, j) !== undefined) fault(path, `feature "${entry.feature}" listed twice in this release`);
      resolve(features, "feature", entry.feature, path);
    });
  });

  checkMessages(doc, fault);
  checkImportSources(doc, fault);
  checkLinks("dismissals", doc.dismissals, "message", messages);
  checkWebhooks(doc, options.allowPrivateWebhookUrls === true, fault);
  checkLinks("subscriptions", doc.subscriptions, "feature", features);

  return issues;
}
