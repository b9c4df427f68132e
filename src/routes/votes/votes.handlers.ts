/**
 * Handlers of the votes area: one statement (visibility check + vote + counters + its event) ->
 * VoteObject (a vote reaching a vote milestone records feature.vote_milestone in it too).
 */

import type { ProjectSettings } from "../../../db/schema.ts";
import type { ContentChange } from "../../lib/data/read-dependencies.ts";
import { success } from "../../lib/http/envelope.ts";
import { ApiError, notFound } from "../../lib/http/errors.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { requireVoter } from "../../middleware/voter.ts";
import { scoreOf } from "../features/index.ts";
import * as votes from "./votes.repository.ts";
import type * as routes from "./votes.routes.ts";
import type { VoteObject } from "./votes.schemas.ts";

function toVoteObject(featureId: number, hasVoted: boolean, counters: votes.FeatureCounters, settings: ProjectSettings): VoteObject {
  return { feature_id: featureId, has_voted: hasVoted, ...scoreOf(counters, settings) };
}

/**
 * The change a vote makes, for the shared read cache (src/lib/data/read-dependencies.ts): one
 * feature's counters and trending score, which may move it in score and trending orders of the
 * listings that can show it (its board, column, status and tags), and whether the project's
 * voter_count (the board document) moved; nothing else a cached read shows.
 */
function voteChange(featureId: number, cast: boolean, counters: votes.FeatureCounters, moves: votes.VoteMoves): ContentChange {
  return {
    kind: "vote",
    featureId,
    cast,
    vote_count: Number(counters.vote_count),
    weighted_score: Number(counters.weighted_score),
    trending_score: moves.trending_score,
    voterCountMoved: moves.voter_count_moved,
    boardId: moves.board_id,
    columnId: moves.column_id,
    status: moves.status,
    tagIds: moves.tag_ids,
  };
}

export const castVote: AppRouteHandler<typeof routes.castVote> = async (c) => {
  const { id } = c.req.valid("param");
  const { db, now } = c.get("deps");
  const project = c.get("project");
  const voter = requireVoter(c.get("voter"));
  const outcome = await votes.castVote(db, project.settings, { projectId: project.id, featureId: id, voterId: voter.id }, now());
  switch (outcome.kind) {
    case "hidden":
      throw notFound("feature");
    case "not_votable":
      throw new ApiError("not_allowed", "this feature takes no votes");
    case "unchanged":
      throw new ApiError("already_exists", "this voter has voted for this feature already");
    case "changed":
      c.set("contentChange", voteChange(id, true, outcome.counters, outcome.moves));
      return c.json(success(toVoteObject(id, true, outcome.counters, project.settings)), 200);
  }
};

export const withdrawVote: AppRouteHandler<typeof routes.withdrawVote> = async (c) => {
  const { id } = c.req.valid("param");
  const { db } = c.get("deps");
  const project = c.get("project");
  const voter = requireVoter(c.get("voter"));
  // Withdrawing is allowed where voting is not (column closed, voting off): nobody is stuck with a vote.
  const outcome = await votes.withdrawVote(db, project.settings, { projectId: project.id, featureId: id, voterId: voter.id });
  switch (outcome.kind) {
    case "hidden":
      throw notFound("feature");
    case "not_votable":
    case "unchanged":
      throw new ApiError("not_found", "this voter has no vote on this feature", { status: 409 });
    case "changed":
      c.set("contentChange", voteChange(id, false, outcome.counters, outcome.moves));
      return c.json(success(toVoteObject(id, false, outcome.counters, project.settings)), 200);
  }
};
