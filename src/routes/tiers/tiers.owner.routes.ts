/** The owner's tier routes (owner-api-v3.md, "Routes": /tiers and /tiers/{tier_id}). */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent, listEnvelopeOf, notModified } from "../../contract/envelope.ts";
import { DeletedObject, OWNER_PATH, OwnerSlugParams, ownerReadErrors, ownerRoute, ownerWriteErrors } from "../../contract/owner-routes.ts";
import { idParam, PageQuery } from "../../contract/params.ts";
import { TierCreateBody, TierObject, TierPatchBody } from "./tiers.owner.schemas.ts";

const TierParams = OwnerSlugParams.extend({ tier_id: idParam("tier_id", "Tier id") });

export const adminListTiers = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/tiers`,
    operationId: "adminListTiers",
    summary: "List tiers",
    description: "The project's tiers in creation order, each with the number of voters on it.",
    request: { params: OwnerSlugParams, query: z.object({ ...PageQuery }) },
    responses: {
      200: jsonContent(listEnvelopeOf(TierObject), "A page of tiers"),
      ...notModified,
      ...ownerReadErrors,
    },
  }),
);

export const adminCreateTier = createRoute(
  ownerRoute({
    method: "post",
    path: `${OWNER_PATH}/tiers`,
    operationId: "adminCreateTier",
    summary: "Create a tier",
    description:
      "name and mrr_cents are required; multiplier defaults to 1. A price id already mapped to another tier of the " +
      "project answers 409 already_exists naming the list.",
    request: {
      params: OwnerSlugParams,
      body: { content: { "application/json": { schema: TierCreateBody } }, required: true },
    },
    responses: {
      201: jsonContent(envelopeOf(TierObject), "The new tier"),
      ...ownerWriteErrors,
    },
  }),
);

export const adminUpdateTier = createRoute(
  ownerRoute({
    method: "patch",
    path: `${OWNER_PATH}/tiers/{tier_id}`,
    operationId: "adminUpdateTier",
    summary: "Change a tier",
    description:
      "Partial update; a price id list sent replaces the stored one. mrr_cents and multiplier change the revenue " +
      "figures at once; votes already cast keep the weight they were cast with in the public score.",
    request: {
      params: TierParams,
      body: { content: { "application/json": { schema: TierPatchBody } }, required: true },
    },
    responses: {
      200: jsonContent(envelopeOf(TierObject), "The tier after the change"),
      ...ownerWriteErrors,
    },
  }),
);

export const adminDeleteTier = createRoute(
  ownerRoute({
    method: "delete",
    path: `${OWNER_PATH}/tiers/{tier_id}`,
    operationId: "adminDeleteTier",
    summary: "Delete a tier",
    description: "Deletes the tier and clears it from its voters (they keep their votes, each at the weight it was cast with).",
    request: { params: TierParams },
    responses: {
      200: jsonContent(envelopeOf(DeletedObject), "The tier was deleted"),
      ...ownerWriteErrors,
    },
  }),
);
