/**
 * Similar features (engagement-api-v3.md, "Similar features"): the public answer for a text and
 * the owner's for a feature or a text, as contract objects. The ranking is
 * features.similar.repository.ts; the objects are the list's own mappers, so visibility and the
 * show_* rules are the public list's (and the owner's objects the owner routes').
 */
import type { Db } from "../../../db/connect.ts";
import type { ProjectSettings } from "../../../db/schema.ts";
import { notFound } from "../../lib/http/errors.ts";
import { toAdminFeatureObject, toFeatureObject } from "./features.mapper.ts";
import type { SimilarAdminFeatureObject } from "./features.owner.schemas.ts";
import type { SimilarFeatureObject } from "./features.schemas.ts";
import { featureExists, findSimilarAdminRows, findSimilarFeatureRows } from "./features.similar.repository.ts";

type Project = { id: number; settings: ProjectSettings };

/**
 * GET /projects/{slug}/features/similar: the `limit` (1..20) features visible to `voterId` (or
 * to anybody when null) most similar to `q` (1..254 characters, trimmed), as FeatureObject plus
 * similarity (0..1, 3 decimals), highest first, then vote_count, then id.
 */
export async function findSimilarFeatures(
  db: Db,
  project: Project,
  q: string,
  options: { voterId: number | null; limit: number; now: Date },
): Promise<SimilarFeatureObject[]> {
  const rows = await findSimilarFeatureRows(db, project, q, options);
  return rows.map((row) => ({ ...toFeatureObject(row, project.settings), similarity: row.similarity }));
}

/**
 * The owner's rule (GET /admin/features/{id}/similar), for a feature or for a free text: the
 * `limit` (1..20) features of the project, public or not, most similar to `q` (1..254
 * characters, trimmed) or to the heading of feature `featureId` (which is then left out), merged
 * duplicates excluded, as AdminFeatureObject plus similarity (0..1, 3 decimals), highest first,
 * then vote_count, then id. Throws ApiError not_found (404) for a `featureId` the project lacks.
 * Used by the owner route and by the MCP tool find_similar_features.
 */
export async function findSimilarAdminFeatures(
  db: Db,
  project: Project,
  target: { q: string } | { featureId: number },
  limit: number,
  now: Date = new Date(),
): Promise<SimilarAdminFeatureObject[]> {
  const rows = await findSimilarAdminRows(db, project, "featureId" in target ? target : { text: target.q }, limit, now);
  // No rows: no match, or no such feature (the statement cannot tell them apart).
  if (rows.length === 0 && "featureId" in target && !(await featureExists(db, project.id, target.featureId))) throw notFound("feature");
  return rows.map((row) => ({ ...toAdminFeatureObject(row, project.settings), similarity: row.similarity }));
}
