/**
 * Row -> FeatureObject (contract, FeatureObject). The display settings decide which counters
 * are sent: a hidden counter is null, never absent and never zero. The listing's pages are
 * written by Postgres instead (features.json.ts, the same object field by field): a change
 * here is made there too (test/features.json.test.ts compares both).
 */

import type { ProjectSettings } from "../../../db/schema.ts";
import { rfc3339, rfc3339OrNull } from "../../lib/http/timestamps.ts";
import type { AdminFeatureRow } from "./features.owner.repository.ts";
import type { AdminFeatureObject } from "./features.owner.schemas.ts";
import type { FeatureRow } from "./features.repository.ts";
import type { FeatureObject } from "./features.schemas.ts";
import { everythingShown } from "./features.visibility.ts";

/** The archived column's ref (contract: the archived column has id -1). */
export const ARCHIVED_COLUMN = { id: -1, name: "Archived", color: null } as const;

function tagsOf(value: unknown): { id: number; name: string }[] {
  const list = typeof value === "string" ? (JSON.parse(value) as unknown) : value;
  if (!Array.isArray(list)) return [];
  return list.map((tag: { id: number; name: string }) => ({ id: Number(tag.id), name: String(tag.name) }));
}

/** The vote counters of a feature as the project shows them (shared with VoteObject). */
export function scoreOf(
  counters: { vote_count: number; weighted_score: number },
  settings: ProjectSettings,
): { vote_count: number | null; score: number | null } {
  if (!settings.show_votes) return { vote_count: null, score: null };
  return {
    vote_count: counters.vote_count,
    score: settings.score_is_weighted ? counters.weighted_score : counters.vote_count,
  };
}

/** Maps a selected row to the contract's FeatureObject under the project's display settings. */
export function toFeatureObject(row: FeatureRow, settings: ProjectSettings): FeatureObject {
  return {
    id: row.id,
    heading: row.heading,
    description: row.description,
    status: row.status,
    board: {
      // The roadmap is board 0 in the API (contract, BoardEntry.id), whatever its row id.
      id: row.board_kind === "roadmap" ? 0 : row.board_id,
      kind: row.board_kind,
      name: row.board_name,
      slug: row.board_slug,
    },
    column: row.column_id === null ? { ...ARCHIVED_COLUMN } : { id: row.column_id, name: row.column_name ?? "", color: row.column_color },
    changelog_type: row.release_id === null ? null : row.changelog_type,
    comment_count: settings.show_comments ? row.comment_count : null,
    ...scoreOf(row, settings),
    score_is_weighted: settings.score_is_weighted,
    view_count: settings.show_views ? row.view_count : null,
    progress: settings.show_progress ? row.progress : null,
    has_voted: row.has_voted,
    is_approved: row.is_approved,
    is_pinned: row.is_pinned,
    developer_response: row.developer_response,
    response_is_denial: row.response_is_denial,
    linked_feature: row.linked_id === null ? null : { id: row.linked_id, heading: row.linked_heading ?? "" },
    release: row.release_id === null ? null : { id: row.release_id, name: row.release_name ?? "" },
    tags: tagsOf(row.tags),
    start_date: rfc3339OrNull(row.start_date),
    target_date: rfc3339OrNull(row.target_date),
    created_at: rfc3339(row.created_at),
    updated_at: rfc3339(row.updated_at),
  };
}

/**
 * Row -> AdminFeatureObject (owner-api-v3.md, "Objects"): every FeatureObject field computed as
 * if every show_* setting were true (counts never null) and has_voted false, plus the owner's
 * fields (author_voter_id is the voter's public id).
 */
export function toAdminFeatureObject(row: AdminFeatureRow, settings: ProjectSettings): AdminFeatureObject {
  return {
    ...toFeatureObject({ ...row, has_voted: false }, everythingShown(settings)),
    is_public: Boolean(row.is_public),
    position: row.position,
    effort: row.effort,
    author_voter_id: row.author_public_id,
    weighted_score: row.weighted_score,
    merged_into: row.merged_into_id === null ? null : { id: row.merged_into_id, heading: row.merged_into_heading ?? "" },
  };
}
