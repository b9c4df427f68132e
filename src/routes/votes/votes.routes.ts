/** Route definitions of the votes area (contract, "Taking part", vote and withdraw). */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent } from "../../contract/envelope.ts";
import { writeErrors } from "../../contract/errors.ts";
import { idParam, SlugParam } from "../../contract/params.ts";
import { describedRoute } from "../../contract/route-description.ts";
import { VoteObject } from "./votes.schemas.ts";

const params = z.object({ slug: SlugParam, id: idParam("id", "Feature id") });

export const castVote = createRoute(
  describedRoute(
    { kind: "write" },
    {
      method: "post",
      path: "/projects/{slug}/features/{id}/vote",
      operationId: "castVote",
      summary: "Vote for a feature",
      description:
        "Adds the voter's vote, weighted by their tier's multiplier. 409 already_exists when the voter has voted already; 403 not_allowed when the feature's column takes no votes, it is archived or the project takes no votes. Banned voters may vote.",
      tags: ["Votes"],
      request: { params },
      responses: {
        200: jsonContent(envelopeOf(VoteObject), "The vote is recorded"),
        ...writeErrors,
      },
    },
  ),
);

export const withdrawVote = createRoute(
  describedRoute(
    { kind: "write" },
    {
      method: "delete",
      path: "/projects/{slug}/features/{id}/vote",
      operationId: "withdrawVote",
      summary: "Withdraw a vote",
      description:
        "Removes the voter's vote. 409 with code not_found when the voter has no vote on the feature. Allowed wherever the feature is visible, also where no new vote would be accepted, so that nobody is stuck with a vote.",
      tags: ["Votes"],
      request: { params },
      responses: {
        200: jsonContent(envelopeOf(VoteObject), "The vote is withdrawn"),
        ...writeErrors,
      },
    },
  ),
);
