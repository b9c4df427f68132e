/**
 * The feature events of owner-api-v3.md ("Events"): feature.created, feature.updated,
 * feature.status_changed, feature.approved, feature.merged / unmerged, feature.deleted and
 * feature.vote_milestone. Each `data.object` is the AdminFeatureObject (after the change; as it
 * was for feature.deleted), read inside the transaction of the change, and each is recorded in
 * that transaction (recordEvents), so it commits or rolls back with it.
 */
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { ProjectSettings } from "../../../db/schema.ts";
import { changesBetween } from "../../events/changes.ts";
import { milestoneAtOrBelowSql, voteMilestoneEvent } from "../../events/milestones.ts";
import { type NewEvent, recordEvents } from "../../events/outbox.ts";
import { ApiError } from "../../lib/errors.ts";
import { toAdminFeatureObject } from "./features.mapper.ts";
import { findAdminFeature } from "./features.owner.repository.ts";
import type { AdminFeatureObjectType } from "./features.owner.schemas.ts";

type Project = { id: number; settings: ProjectSettings };

/**
 * The AdminFeatureObject of feature `id` as `db` (the change's transaction) sees it; 500 when it
 * is missing, since callers hold its row lock or have just written it.
 */
export async function adminFeatureObject(db: Db, project: Project, id: number, now: Date): Promise<AdminFeatureObjectType> {
  const row = await findAdminFeature(db, project, id, now);
  if (!row) throw new ApiError("internal", "the feature could not be read back");
  return toAdminFeatureObject(row, project.settings);
}

/**
 * The fields an update event compares, references as ids (owner-api-v3.md: "references appear
 * as ids, e.g. merged_into: {from: null, to: 12}"): board, column, linked_feature, release and
 * merged_into by id, tags as the list of tag ids. updated_at is left out: it moves with every
 * edit and is not what changed.
 */
export function featureChangeView(feature: AdminFeatureObjectType): Record<string, unknown> {
  const { updated_at: _updatedAt, board, column, linked_feature, release, merged_into, tags, ...fields } = feature;
  return {
    ...fields,
    board: board.id,
    column: column.id,
    linked_feature: linked_feature?.id ?? null,
    release: release?.id ?? null,
    merged_into: merged_into?.id ?? null,
    tags: tags.map((tag) => tag.id),
  };
}

/**
 * Events of a change to a feature other than its creation or deletion, from its
 * AdminFeatureObject before and after: `lead` (feature.updated for an owner edit,
 * feature.merged / unmerged) with every changed field, then feature.status_changed with
 * `changes.status` when the status moved, and feature.approved when is_approved went from false
 * to true. Nothing when nothing differs (an edit that changed nothing records no event).
 */
export function featureChangeEvents(
  lead: "feature.updated" | "feature.merged" | "feature.unmerged",
  before: AdminFeatureObjectType,
  after: AdminFeatureObjectType,
): NewEvent[] {
  const changes = changesBetween(featureChangeView(before), featureChangeView(after));
  if (!changes) return [];
  const events: NewEvent[] = [{ type: lead, object: after, changes }];
  if (changes.status) events.push({ type: "feature.status_changed", object: after, changes: { status: changes.status } });
  if (!before.is_approved && after.is_approved) {
    events.push({ type: "feature.approved", object: after, changes: { is_approved: { from: false, to: true } } });
  }
  return events;
}

/** Records feature.created for feature `id`, just inserted in `trx`. */
export async function recordFeatureCreated(trx: Db, project: Project, id: number, now: Date): Promise<AdminFeatureObjectType> {
  const feature = await adminFeatureObject(trx, project, id, now);
  await recordEvents(trx, project.id, [{ type: "feature.created", object: feature }]);
  return feature;
}

/**
 * Records feature.vote_milestone for `threshold` on feature `featureId`, whose vote reaching it
 * is being written in `trx`.
 */
export async function recordVoteMilestone(trx: Db, project: Project, featureId: number, threshold: number, now: Date): Promise<void> {
  const feature = await adminFeatureObject(trx, project, featureId, now);
  await recordEvents(trx, project.id, [voteMilestoneEvent(feature, threshold)]);
}

/**
 * After votes moved in bulk (a merge carrying the duplicate's votes to the target, an unmerge
 * giving them back), records feature.vote_milestone for each of `featureIds` whose vote_count now
 * passes a threshold above the one announced, once, for the highest such threshold (a merge that
 * takes a feature from 8 to 60 votes announces 50, not 10, 25 and 50 at the same moment; 10 and
 * 25 count as passed and are never announced later). The caller holds the feature rows.
 */
export async function recordReachedMilestones(trx: Db, project: Project, featureIds: readonly number[], now: Date): Promise<void> {
  if (featureIds.length === 0) return;
  const reached = await trx
    .updateTable("features")
    .set({ vote_milestone: milestoneAtOrBelowSql(sql.ref("features.vote_count")) })
    .where("id", "=", sql<number>`any(${[...featureIds]}::int[])`)
    .where(sql<boolean>`${milestoneAtOrBelowSql(sql.ref("features.vote_count"))} > features.vote_milestone`)
    .returning(["id", "vote_milestone"])
    .execute();
  for (const row of reached.sort((a, b) => a.id - b.id)) await recordVoteMilestone(trx, project, row.id, row.vote_milestone, now);
}
