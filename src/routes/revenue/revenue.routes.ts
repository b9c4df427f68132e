/**
 * Revenue routes (contract, "Endpoints", Revenue (secret key only)): billing-linked voters and
 * revenue per feature. Both refuse the embed key with 403 not_allowed before the query is
 * validated; the PRO plan is already enforced by the key middleware (also not_allowed).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { jsonContent, listEnvelopeOf, notModified } from "../../contract/envelope.ts";
import { readErrors } from "../../contract/errors.ts";
import { booleanParam, integerParam, MAX_ID, PageQuery, SlugParam } from "../../contract/params.ts";
import { describedRoute } from "../../contract/route-description.ts";
import { secretKeyOnly } from "./revenue.middleware.ts";
import { RevenueFeatureObject, RevenueVoterObject } from "./revenue.schemas.ts";

export const REVENUE_SORTS = ["mrr", "votes", "weighted", "priority"] as const;
export type RevenueSort = (typeof REVENUE_SORTS)[number];

export const listVoters = createRoute(
  describedRoute(
    { kind: "read" },
    {
      method: "get",
      path: "/projects/{slug}/voters",
      operationId: "listRevenueVoters",
      summary: "List voters with their billing link and revenue",
      description:
        "Secret key only (an embed key answers 403 not_allowed). Every voter of the project, in creation order, " +
        "with billing ids, subscription state, monthly worth in cents, tier and their newest 100 votes. " +
        "customer_id matches the Stripe or the Paddle id; an id nobody carries returns an empty list. " +
        "feature_id keeps voters who voted for that feature (an unknown feature gives an empty list).",
      tags: ["Revenue"],
      middleware: [secretKeyOnly()] as const,
      request: {
        params: z.object({ slug: SlugParam }),
        query: z.object({
          customer_id: z
            .string()
            .min(1)
            .max(255)
            .optional()
            .openapi({
              param: { name: "customer_id", in: "query" },
              description: "Billing customer id, matched against both the Stripe and the Paddle id",
              example: "cus_Q2w3E4r5T6",
            }),
          churned: booleanParam()
            .optional()
            .openapi({
              param: { name: "churned", in: "query" },
              description: "true = voters who left, false = voters who stayed; omit for both",
              example: false,
            }),
          feature_id: integerParam(1, MAX_ID)
            .optional()
            .openapi({
              param: { name: "feature_id", in: "query" },
              description: "Only voters who voted for this feature",
              example: 41,
            }),
          ...PageQuery,
        }),
      },
      responses: {
        200: jsonContent(listEnvelopeOf(RevenueVoterObject), "A page of voters"),
        ...notModified,
        ...readErrors,
      },
    },
  ),
);

export const listRevenueFeatures = createRoute(
  describedRoute(
    { kind: "read" },
    {
      method: "get",
      path: "/projects/{slug}/revenue/features",
      operationId: "listRevenueFeatures",
      summary: "List every feature with the revenue behind it",
      description:
        "Secret key only (an embed key answers 403 not_allowed). Every feature of the project, including ones " +
        "awaiting approval, denied and archived, with headcount, weighted votes (voters' current tiers), paying and " +
        "churned voters, monthly revenue in cents (churned voters excluded) and the top tier. Ties break by id ascending.",
      tags: ["Revenue"],
      middleware: [secretKeyOnly()] as const,
      request: {
        params: z.object({ slug: SlugParam }),
        query: z.object({
          sort: z
            .enum(REVENUE_SORTS)
            .default("mrr")
            .openapi({
              param: { name: "sort", in: "query" },
              description:
                "mrr = revenue behind the feature (default); votes = plain headcount; weighted = weighted total; " +
                "priority = weighted total divided by the recorded effort, features without effort last",
              example: "mrr",
            }),
          ...PageQuery,
        }),
      },
      responses: {
        200: jsonContent(listEnvelopeOf(RevenueFeatureObject), "A page of features with revenue figures"),
        ...notModified,
        ...readErrors,
      },
    },
  ),
);
