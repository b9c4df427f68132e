/**
 * Writing a suggestion (contract, "Taking part", POST features): it lands on the roadmap in
 * the first column whose status is open, awaiting review, at the end of the owner's order.
 */
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { ProjectSettings } from "../../../db/schema.ts";
import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import { subscribeOnChange } from "../../lib/data/subscriptions.ts";
import { recordFeatureCreated } from "./features.events.ts";

/** The roadmap's first open column (lowest position, then id); undefined when it has none. */
export async function findSuggestionColumn(db: Db, projectId: number): Promise<{ board_id: number; column_id: number } | undefined> {
  return db
    .selectFrom("columns")
    .innerJoin("boards", "boards.id", "columns.board_id")
    .select(["columns.board_id", "columns.id as column_id"])
    .where("boards.project_id", "=", projectId)
    .where("boards.kind", "=", "roadmap")
    .where("columns.status", "=", "open")
    .orderBy("columns.position")
    .orderBy("columns.id")
    .limit(1)
    .executeTakeFirst();
}

export interface NewSuggestion {
  projectId: number;
  boardId: number;
  columnId: number;
  heading: string;
  description: string;
  authorVoterId: number;
  now: Date;
}

/**
 * Inserts the suggestion (status open, is_approved false, position one past the board's
 * highest) with its feature.created event and its author's subscription (engagement-api-v3.md,
 * "Subscriptions" rule 1: reason `author`), and returns its id. The position is computed in the
 * INSERT itself; two suggestions racing may share a position, which sort=board breaks by id.
 * Holds the project's write lock (src/lib/data/project-write-lock.ts).
 */
export async function insertSuggestion(db: Db, suggestion: NewSuggestion, settings: ProjectSettings): Promise<number> {
  return withProjectWriteLock(db, suggestion.projectId, async (trx) => {
    const row = await trx
      .insertInto("features")
      .values({
        project_id: suggestion.projectId,
        board_id: suggestion.boardId,
        column_id: suggestion.columnId,
        status: "open",
        heading: suggestion.heading,
        description: suggestion.description,
        author_voter_id: suggestion.authorVoterId,
        is_approved: false,
        position: sql<number>`(SELECT coalesce(max(position), -1) + 1 FROM features WHERE board_id = ${suggestion.boardId})`,
        progress: null,
        effort: null,
        developer_response: null,
        linked_feature_id: null,
        trending_score: null,
        created_at: suggestion.now,
        updated_at: suggestion.now,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    await subscribeOnChange(trx, {
      projectId: suggestion.projectId,
      featureId: row.id,
      voterId: suggestion.authorVoterId,
      reason: "author",
      now: suggestion.now,
    });
    await recordFeatureCreated(trx, { id: suggestion.projectId, settings }, row.id, suggestion.now);
    return row.id;
  });
}
