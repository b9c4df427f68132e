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
import {
  findFeatureHeading,
  findSimilarAdminRows,
  findSimilarFeatureRows,
  type RankedFeature,
  rankSimilarFeatures,
} from "./features.similar.repository.ts";

type Project = { id: number; settings: ProjectSettings };

function withSimilarity<T extends { id: number }>(objects: T[], ranked: RankedFeature[]): (T & { similarity: number })[] {
  const similarity = new Map(ranked.map((feature) => [feature.id, feature.similarity]));
  return objects.map((object) => ({ ...object, similarity: similarity.get(object.id) ?? 0 }));
}

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
  const ranked = await rankSimilarFeatures(db, project, q, { kind: "public", voterId: options.voterId }, options.limit);
  const rows = await findSimilarFeatureRows(
    db,
    project,
    ranked.map((feature) => feature.id),
    { voterId: options.voterId, now: options.now },
  );
  return withSimilarity(
    rows.map((row) => toFeatureObject(row, project.settings)),
    ranked,
  );
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
  let text: string;
  let excludeId: number | null = null;
  if ("featureId" in target) {
    const heading = await findFeatureHeading(db, project.id, target.featureId);
    if (heading === undefined) throw notFound("feature");
    text = heading;
    excludeId = target.featureId;
  } else {
    text = target.q;
  }
  const ranked = await rankSimilarFeatures(db, project, text, { kind: "owner", excludeId }, limit);
  const rows = await findSimilarAdminRows(
    db,
    project,
    ranked.map((feature) => feature.id),
    now,
  );
  return withSimilarity(
    rows.map((row) => toAdminFeatureObject(row, project.settings)),
    ranked,
  );
}
