import { page } from "../../lib/http/envelope.ts";
import { pageMeta } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { listRevenueFeatures as queryRevenueFeatures } from "./revenue.features.repository.ts";
import { toRevenueFeature, toRevenueVoter } from "./revenue.mapper.ts";
import type * as routes from "./revenue.routes.ts";
import { listNewestVotes, listRevenueVoters, type VoteRefRow } from "./revenue.voters.repository.ts";

/** GET /projects/{slug}/voters: a page of RevenueVoterObject, voters in creation order. */
export const listVoters: AppRouteHandler<typeof routes.listVoters> = async (c) => {
  const { customer_id, churned, feature_id, page: pageNumber, per_page } = c.req.valid("query");
  const { db } = c.get("deps");
  const project = c.get("project");
  const request = { page: pageNumber, per_page };
  const { rows, total } = await listRevenueVoters(db, project.id, { customerId: customer_id, churned, featureId: feature_id }, request);
  const votes = await listNewestVotes(
    db,
    rows.map((row) => row.id),
  );
  const votesByVoter = new Map<number, VoteRefRow[]>();
  for (const vote of votes) {
    const list = votesByVoter.get(vote.voter_id);
    if (list) list.push(vote);
    else votesByVoter.set(vote.voter_id, [vote]);
  }
  const data = rows.map((row) => toRevenueVoter(row, votesByVoter.get(row.id) ?? [], project.currency_symbol, customer_id));
  return c.json(page(data, pageMeta(request, total)), 200);
};

/** GET /projects/{slug}/revenue/features: a page of RevenueFeatureObject in the asked order. */
export const listRevenueFeatures: AppRouteHandler<typeof routes.listRevenueFeatures> = async (c) => {
  const { sort, page: pageNumber, per_page } = c.req.valid("query");
  const project = c.get("project");
  const request = { page: pageNumber, per_page };
  const { rows, total } = await queryRevenueFeatures(c.get("deps").db, project.id, sort, request);
  const data = rows.map((row) => toRevenueFeature(row, project.currency_symbol));
  return c.json(page(data, pageMeta(request, total)), 200);
};
