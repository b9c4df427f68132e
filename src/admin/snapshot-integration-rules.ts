/**
 * Snapshot rules about webhooks and merged features (docs/contract/project-snapshot.md,
 * "Webhooks, merges
 * and engagement"): a webhook's URL has the form the owner route accepts (owner-api-v3.md,
 * "Webhooks"), and a merge names a target the file holds, which is not itself merged (owner
 * Rule 2), with voters that resolve.
 *
 * The owner route also resolves a webhook's host and refuses private addresses; an import does
 * not ask DNS (a restore must not depend on the resolver of the machine running it, and the spec
 * makes the delivery check the guard that counts: "again at delivery time, since a name can
 * resolve differently later"). An IP literal needs no resolver and is checked here.
 */
import { isIP } from "node:net";
import { hostOf, nonPublicRange, parseWebhookUrl, WebhookUrlRefused } from "../events/url-guard.ts";
import type { SnapshotDocument } from "./snapshot.schema.ts";
import { type Fault, FirstSeen, type Resolve } from "./snapshot-rules.ts";

/**
 * Every webhook's URL (https, or http too when `allowPrivateUrls`, as WEBHOOK_ALLOW_PRIVATE_URLS
 * allows on the owner route; no credentials; an IP literal public unless `allowPrivateUrls`), no
 * event type listed twice, `disabled_reason` only on a disabled webhook, and the previous secret
 * together with its expiry.
 */
export function checkWebhooks(doc: SnapshotDocument, allowPrivateUrls: boolean, fault: Fault) {
  doc.webhooks.forEach((webhook, i) => {
    const path = `webhooks[${i}]`;
    try {
      const url = parseWebhookUrl(webhook.url, allowPrivateUrls);
      const host = hostOf(url);
      const range = !allowPrivateUrls && isIP(host) !== 0 ? nonPublicRange(host) : null;
      if (range !== null)
        fault(`${path}.url`, `${host} is not a public address (${range}); allowed only where WEBHOOK_ALLOW_PRIVATE_URLS=true`);
    } catch (error) {
      if (!(error instanceof WebhookUrlRefused)) throw error;
      fault(`${path}.url`, error.message);
    }
    const types = new FirstSeen<string>();
    webhook.events.forEach((type, t) => {
      const first = types.add(type, t);
      if (first !== undefined) fault(`${path}.events[${t}]`, `"${type}" already listed at events[${first}]`);
    });
    if (webhook.enabled && webhook.disabled_reason !== null) {
      fault(`${path}.disabled_reason`, "only a disabled webhook has one; leave it null or set enabled to false");
    }
    if ((webhook.previous_secret === null) !== (webhook.previous_secret_expires_at === null)) {
      fault(
        webhook.previous_secret === null ? `${path}.previous_secret_expires_at` : `${path}.previous_secret`,
        "previous_secret and previous_secret_expires_at go together",
      );
    }
  });
}

/** Ref indexes checkMerges resolves against (ref -> position in its list). */
export interface MergeIndexes {
  features: Map<string, number>;
  voters: Map<string, number>;
  /** Column ref -> index of its board in `doc.boards`. */
  columnBoard: Map<string, number>;
  boards: Map<string, number>;
}

/**
 * Every merged feature's `merge`: `into` resolves, is not the feature itself and is not merged
 * itself (owner Rule 2: merging into a merged feature is refused); `previous_column` is a column
 * of the feature's board; `previous_linked_feature` resolves; every voter resolves and is listed
 * once over moved_voters and kept_voters; a moved voter has a vote on `into` (the vote moved
 * there); `kept_vote_times` names kept voters, each once.
 */
export function checkMerges(doc: SnapshotDocument, indexes: MergeIndexes, resolve: Resolve, fault: Fault) {
  const votes = new Set(doc.votes.map((vote) => JSON.stringify([vote.voter, vote.feature])));
  doc.features.forEach((feature, i) => {
    const merge = feature.merge;
    if (merge === null) return;
    const path = `features[${i}].merge`;
    if (merge.into === feature.ref) {
      fault(`${path}.into`, "a feature cannot be merged into itself");
    } else {
      const target = resolve(indexes.features, "feature", merge.into, `${path}.into`);
      const targetMerge = target === undefined ? null : doc.features[target]!.merge;
      if (targetMerge) {
        fault(`${path}.into`, `feature "${merge.into}" is itself merged (into "${targetMerge.into}"); a merge target cannot be merged`);
      }
    }
    if (merge.previous_column !== null) {
      const board = indexes.boards.get(feature.board);
      const columnBoard = indexes.columnBoard.get(merge.previous_column);
      if (columnBoard === undefined) fault(`${path}.previous_column`, `no column with ref "${merge.previous_column}"`);
      else if (board !== undefined && columnBoard !== board) {
        fault(`${path}.previous_column`, `no column "${merge.previous_column}" on board "${feature.board}"`);
      }
    }
    if (merge.previous_linked_feature !== null) {
      resolve(indexes.features, "feature", merge.previous_linked_feature, `${path}.previous_linked_feature`);
    }
    const listed = new FirstSeen<string>();
    const check = (list: "moved_voters" | "kept_voters") =>
      merge[list].forEach((voter, j) => {
        const at = `${path}.${list}[${j}]`;
        if (resolve(indexes.voters, "voter", voter, at) === undefined) return;
        const first = listed.add(voter, j);
        if (first !== undefined) fault(at, `voter "${voter}" is listed twice in this merge`);
        else if (list === "moved_voters" && !votes.has(JSON.stringify([voter, merge.into]))) {
          fault(at, `voter "${voter}" has no vote on "${merge.into}", where a moved vote sits`);
        }
      });
    check("moved_voters");
    check("kept_voters");
    const kept = new Set(merge.kept_voters);
    const timed = new FirstSeen<string>();
    merge.kept_vote_times.forEach((entry, k) => {
      const at = `${path}.kept_vote_times[${k}].voter`;
      if (!kept.has(entry.voter)) fault(at, `voter "${entry.voter}" is not in kept_voters`);
      else if (timed.add(entry.voter, k) !== undefined) fault(at, `voter "${entry.voter}" listed twice`);
    });
  });
}
