/** Handlers of the votes area: visibility check -> one transaction -> VoteObject. */
import { requireVoter } from "../../middleware/voter.ts";
import type { ProjectSettings } from "../../../db/schema.ts";
import { success } from "../../lib/envelope.ts";
import { ApiError, notFound } from "../../lib/errors.ts";
import type { AppRouteHandler } from "../../lib/openapi.ts";
import { scoreOf } from "../features/features.mapper.ts";
import { findVisibleFeature } from "../features/features.visibility.ts";
import { addVote, type FeatureCounters, removeVote } from "./votes.repository.ts";
import type * as routes from "./votes.routes.ts";
import type { VoteObjectType } from "./votes.schemas.ts";

function toVoteObject(featureId: number, hasVoted: boolean, counters: FeatureCounters, settings: ProjectSettings): VoteObjectType {
  return { feature_id: featureId, has_voted: hasVoted, ...scoreOf(counters, settings) };
}

export const castVote: AppRouteHandler<typeof routes.castVote> = async (c) => {
  const { id } = c.req.valid("param");
  const { db, now } = c.get("deps");
  const project = c.get("project");
  const voter = requireVoter(c.get("voter"));
  const feature = await findVisibleFeature(db, project, id, voter.id);
  if (!feature) throw notFound("feature");
  if (!feature.is_votable) throw new ApiError("not_allowed", "this feature takes no votes");
  const counters = await addVote(db, { projectId: project.id, featureId: id, voterId: voter.id }, now());
  if (!counters) throw new ApiError("already_exists", "this voter has voted for this feature already");
  return c.json(success(toVoteObject(id, true, counters, project.settings)), 200);
};

export const withdrawVote: AppRouteHandler<typeof routes.withdrawVote> = async (c) => {
  const { id } = c.req.valid("param");
  const { db } = c.get("deps");
  const project = c.get("project");
  const voter = requireVoter(c.get("voter"));
  // Withdrawing is allowed where voting is not (column closed, voting off): nobody is stuck with a vote.
  const feature = await findVisibleFeature(db, project, id, voter.id);
  if (!feature) throw notFound("feature");
  const counters = await removeVote(db, { projectId: project.id, featureId: id, voterId: voter.id });
  if (!counters) throw new ApiError("not_found", "this voter has no vote on this feature", { status: 409 });
  return c.json(success(toVoteObject(id, false, counters, project.settings)), 200);
};
