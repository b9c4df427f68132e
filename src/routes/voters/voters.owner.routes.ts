/**
 * The owner's voter routes (owner-api-v3.md, "Routes": /voters and /voters/{voter_id}; Rules 3
 * and 6). Secret key only, identity headers ignored (src/app.ts marks the owner paths).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent, listEnvelopeOf, notModified } from "../../contract/envelope.ts";
import {
  DeletedVoterObject,
  OWNER_PATH,
  OwnerSlugParams,
  ownerReadErrors,
  ownerRoute,
  ownerWriteErrors,
} from "../../contract/owner-routes.ts";
import { booleanParam, integerParam, MAX_ID, PageQuery } from "../../contract/params.ts";
import { AdminVoterObject, VoterPatchBody } from "./voters.owner.schemas.ts";

/** An optional true/false filter, `type: boolean` in the description (see booleanParam). */
const booleanQuery = (name: string, description: string) =>
  booleanParam()
    .optional()
    .openapi({ param: { name, in: "query" }, description, example: false });

const VoterParams = OwnerSlugParams.extend({
  voter_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({
      param: { name: "voter_id", in: "path" },
      description: "Public voter id, as the identity route reports it",
      example: "v_3k9x2mQ1bF0aZ7yT",
    }),
});

export const adminListVoters = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/voters`,
    operationId: "adminListVoters",
    summary: "List every voter",
    description:
      "Every voter of the project, billing-linked or not, in creation order. q is a case-insensitive substring of the " +
      "display name, email, company, Stripe or Paddle customer id; a tier_id no tier has gives an empty list.",
    request: {
      params: OwnerSlugParams,
      query: z.object({
        q: z
          .string()
          .max(200)
          .optional()
          .openapi({
            param: { name: "q", in: "query" },
            description: "Search text (blank: no filter)",
            example: "ada",
          }),
        banned: booleanQuery("banned", "true = banned voters only, false = the others"),
        tier_id: integerParam(1, MAX_ID)
          .optional()
          .openapi({
            param: { name: "tier_id", in: "query" },
            description: "Only voters on this tier",
            example: 2,
          }),
        churned: booleanQuery("churned", "true = voters who left, false = voters who stayed"),
        ...PageQuery,
      }),
    },
    responses: {
      200: jsonContent(listEnvelopeOf(AdminVoterObject), "A page of voters"),
      ...notModified,
      ...ownerReadErrors,
    },
  }),
);

export const adminGetVoter = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/voters/{voter_id}`,
    operationId: "adminGetVoter",
    summary: "Get a voter",
    description: "One voter of the project; 404 for an id of no voter of this project.",
    request: { params: VoterParams },
    responses: {
      200: jsonContent(envelopeOf(AdminVoterObject), "The voter"),
      ...notModified,
      ...ownerReadErrors,
    },
  }),
);

export const adminUpdateVoter = createRoute(
  ownerRoute({
    method: "patch",
    path: `${OWNER_PATH}/voters/{voter_id}`,
    operationId: "adminUpdateVoter",
    summary: "Change a voter",
    description:
      "Partial update. banned takes effect on the voter's next write on every instance; tier_id and " +
      "mrr_override_cents change the revenue figures at once, while votes already cast keep the weight they were cast " +
      "with in the public score. churned: true records churn_source manual and churned_at now; false clears the three " +
      "churn fields. A tier_id of no tier of this project: 422 tier_id.",
    request: {
      params: VoterParams,
      body: { content: { "application/json": { schema: VoterPatchBody } }, required: true },
    },
    responses: {
      200: jsonContent(envelopeOf(AdminVoterObject), "The voter after the change"),
      ...ownerWriteErrors,
    },
  }),
);

export const adminDeleteVoter = createRoute(
  ownerRoute({
    method: "delete",
    path: `${OWNER_PATH}/voters/{voter_id}`,
    operationId: "adminDeleteVoter",
    summary: "Erase a voter",
    description:
      "Erasure: removes the voter with its votes, likes, dismissals and comments (with their replies); every counter " +
      "stays exact. Its anonymous token answers 401 identity_invalid afterwards; an SSO token with its sub mints a new " +
      "voter with no history.",
    request: { params: VoterParams },
    responses: {
      200: jsonContent(envelopeOf(DeletedVoterObject), "The voter was erased"),
      ...ownerWriteErrors,
    },
  }),
);
