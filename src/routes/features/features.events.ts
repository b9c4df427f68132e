/**
 * The feature events of owner-api-v3.md ("Events"): feature.created, feature.updated,
 * feature.status_changed, feature.approved, feature.merged / unmerged, feature.deleted and
 * feature.vote_milestone. Each `data.object` is the AdminFeatureObject (after the change; as it
 * was for feature.deleted), read inside the transaction of the change, and each is recorded in
 * that transaction (recordEvents), so it commits or rolls back with it.
 */
import { type Expression, type RawBuilder, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { ProjectSettings } from "../../../db/schema.ts";
import { changesBetween } from "../../events/changes.ts";
import { milestoneAtOrBelowSql, voteMilestoneEvent } from "../../events/milestones.ts";
import { type NewEvent, recordEvents } from "../../events/outbox.ts";
import { ApiError } from "../../lib/http/errors.ts";
import { toAdminFeatureObject } from "./features.mapper.ts";
import { adminRows, findAdminFeature } from "./features.owner.repository.ts";
import type { AdminFeatureObject } from "./features.owner.schemas.ts";

type Project = { id: number; settings: ProjectSettings };

/**
 * The AdminFeatureObject of feature `id` as `db` (the change's transaction) sees it; 500 when it
 * is missing, since callers hold its row lock or have just written it.
 */
export async function adminFeatureObject(db: Db, project: Project, id: number, now: Date): Promise<AdminFeatureObject> {
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
export function featureChangeView(feature: AdminFeatureObject): Record<string, unknown> {
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
  before: AdminFeatureObject,
  after: AdminFeatureObject,
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
export async function recordFeatureCreated(trx: Db, project: Project, id: number, now: Date): Promise<AdminFeatureObject> {
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

/** SQL of rfc3339 (src/lib/http/timestamps.ts): a timestamptz as Date.toISOString() writes it, or null. */
function isoTimestamp(column: string): RawBuilder<string | null> {
  return sql`to_char(${sql.ref(column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * SQL of the AdminFeatureObject of feature `featureId` (toAdminFeatureObject, in jsonb), for an
 * event inserted by a single statement (a vote reaching a milestone): a scalar subquery over the
 * same row selection findAdminFeature reads. It sees the rows as they were when the statement
 * began, so the counters the statement moves are passed in (`counters`, from its own RETURNING).
 * test/events.emission.test.ts compares it with GET /admin/features/{id}.
 */
export function adminFeatureJsonSql(
  db: Db,
  project: Project,
  featureId: unknown,
  now: unknown,
  counters: { vote_count: Expression<number>; weighted_score: Expression<number>; score_is_weighted: unknown },
): RawBuilder<unknown> {
  const row = adminRows(db, db.selectFrom("features").where("features.id", "=", featureId as number), project, now as Date).as("a");
  const ref = (column: string) => sql.ref(`a.${column}`);
  const nullableRef = (id: string, fields: RawBuilder<unknown>) => sql`CASE WHEN ${ref(id)} IS NULL THEN NULL ELSE ${fields} END`;
  const weighted = sql`${counters.score_is_weighted}::boolean`;
  return sql`(SELECT jsonb_build_object(
    'id', ${ref("id")}, 'heading', ${ref("heading")}, 'description', ${ref("description")}, 'status', ${ref("status")},
    'board', jsonb_build_object('id', CASE WHEN ${ref("board_kind")} = 'roadmap' THEN 0 ELSE ${ref("board_id")} END,
      'kind', ${ref("board_kind")}, 'name', ${ref("board_name")}, 'slug', ${ref("board_slug")}),
    'column', CASE WHEN ${ref("column_id")} IS NULL THEN jsonb_build_object('id', -1, 'name', 'Archived', 'color', NULL)
      ELSE jsonb_build_object('id', ${ref("column_id")}, 'name', coalesce(${ref("column_name")}, ''), 'color', ${ref("column_color")}) END,
    'changelog_type', ${nullableRef("release_id", sql`${ref("changelog_type")}`)},
    'comment_count', ${ref("comment_count")},
    'vote_count', ${counters.vote_count},
    'score', CASE WHEN ${weighted} THEN ${counters.weighted_score} ELSE ${counters.vote_count} END,
    'score_is_weighted', ${weighted},
    'view_count', ${ref("view_count")}, 'progress', ${ref("progress")}, 'has_voted', false,
    'is_approved', ${ref("is_approved")}, 'is_pinned', ${ref("is_pinned")},
    'developer_response', ${ref("developer_response")}, 'response_is_denial', ${ref("response_is_denial")},
    'linked_feature', ${nullableRef("linked_id", sql`jsonb_build_object('id', ${ref("linked_id")}, 'heading', coalesce(${ref("linked_heading")}, ''))`)},
    'release', ${nullableRef("release_id", sql`jsonb_build_object('id', ${ref("release_id")}, 'name', coalesce(${ref("release_name")}, ''))`)},
    'tags', ${ref("tags")}::jsonb,
    'start_date', ${isoTimestamp("a.start_date")}, 'target_date', ${isoTimestamp("a.target_date")},
    'created_at', ${isoTimestamp("a.created_at")}, 'updated_at', ${isoTimestamp("a.updated_at")},
    'is_public', ${ref("is_public")}, 'position', ${ref("position")}, 'effort', ${ref("effort")},
    'author_voter_id', ${ref("author_public_id")}, 'weighted_score', ${counters.weighted_score},
    'merged_into', ${nullableRef("merged_into_id", sql`jsonb_build_object('id', ${ref("merged_into_id")}, 'heading', coalesce(${ref("merged_into_heading")}, ''))`)}
  ) FROM ${row})`;
}
