/**
 * How a reader with an identity sees a cached anonymous features page or feature (the shared read
 * cache's Personalize, src/middleware/shared-read-cache.ts), declared by the route definitions.
 */
import type { Personalize } from "../../middleware/shared-read-cache.ts";
import { findVotedFeatureIds } from "./features.repository.ts";

/**
 * has_voted for the request's voter on a cached anonymous features page or feature (the only
 * field an identity changes on features the anonymous reader also sees): one indexed query.
 * Used by the routes' shared read cache (src/middleware/shared-read-cache.ts).
 */
export const withVoterVotes: Personalize = {
  field: "has_voted",
  trueFor: (featureIds, voter, deps) => findVotedFeatureIds(deps.db, voter.id, featureIds),
};
