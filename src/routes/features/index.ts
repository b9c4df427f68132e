/** Router of the features area: .openapi(route, handler) for each route in features.routes.ts. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./features.handlers.ts";
import * as ownerHandlers from "./features.owner.handlers.ts";
import * as ownerRoutes from "./features.owner.routes.ts";
import * as routes from "./features.routes.ts";

export function createFeaturesRouter() {
  const router = createRouter();
  router.openapi(routes.listFeatures, handlers.listFeatures);
  // Before getFeature: `/features/similar` is not a feature id.
  router.openapi(routes.listSimilarFeatures, handlers.listSimilarFeatures);
  router.openapi(routes.getFeature, handlers.getFeature);
  router.openapi(routes.createFeature, handlers.createFeature);
  router.openapi(ownerRoutes.adminListFeatures, ownerHandlers.adminListFeatures);
  router.openapi(ownerRoutes.adminGetFeature, ownerHandlers.adminGetFeature);
  router.openapi(ownerRoutes.adminCreateFeature, ownerHandlers.adminCreateFeature);
  router.openapi(ownerRoutes.adminUpdateFeature, ownerHandlers.adminUpdateFeature);
  router.openapi(ownerRoutes.adminDeleteFeature, ownerHandlers.adminDeleteFeature);
  router.openapi(ownerRoutes.adminMergeFeature, ownerHandlers.adminMergeFeature);
  router.openapi(ownerRoutes.adminUnmergeFeature, ownerHandlers.adminUnmergeFeature);
  router.openapi(ownerRoutes.adminListSimilarFeatures, ownerHandlers.adminListSimilarFeatures);
  return router;
}

// What an import (src/routes/imports/writer/) runs inside its own transaction: the owner's merge
// core (no events: its handler records them) and the counters recomputed from rows.
export { recountFeatures, recountVoters } from "./features.counters.repository.ts";
// What other areas may use: a feature's visibility to the public, its score, and the owner's
// view of it in SQL (for events recorded by a vote's own statement).
export { adminFeatureJsonSql } from "./features.events.ts";
export { scoreOf } from "./features.mapper.ts";
export { type MergeOutcome, mergeFeature } from "./features.merge.repository.ts";
// Route definitions the MCP tools wrap (their request schemas are the tools' arguments).
export {
  adminGetFeature,
  adminListFeatures,
  adminListSimilarFeatures,
  adminMergeFeature,
  adminUpdateFeature,
} from "./features.owner.routes.ts";
export { AdminFeatureObject, SimilarAdminFeatureObject, SimilarAdminFeaturesQuery } from "./features.owner.schemas.ts";
// The owner's similar-features rule for a feature id or a free text (MCP find_similar_features),
// and the query definitions its arguments derive from (q, limit).
export { SimilarFeaturesQuery } from "./features.schemas.ts";
export { findSimilarAdminFeatures } from "./features.similar.ts";
export { findVisibleFeature, publiclyListed, visibilityShapeKey, visibleFeatureQuery, visibleTo } from "./features.visibility.ts";
