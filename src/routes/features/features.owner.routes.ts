/**
 * Owner routes of the features area (owner-api-v3.md, "Routes" /features and Rules 1-3): every
 * feature public or not, written by the owner; the secret key only (src/app.ts marks the paths).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent, listEnvelopeOf, notModified } from "../../contract/envelope.ts";
import {
  OWNER_PATH,
  OwnerSlugParams,
  ownerDeleteRoute,
  ownerReadErrors,
  ownerRoute,
  ownerWriteErrors,
} from "../../contract/owner-routes.ts";
import { idParam, SlugParam } from "../../contract/params.ts";
import {
  AdminFeatureCreateBody,
  AdminFeatureListQuery,
  AdminFeatureObject,
  AdminFeaturePatchBody,
  FeatureMergeBody,
  SimilarAdminFeatureObject,
  SimilarAdminFeaturesQuery,
} from "./features.owner.schemas.ts";

const FeatureParams = z.object({ slug: SlugParam, id: idParam("id", "Feature id") });
const jsonBody = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  required: true,
  description,
});

export const adminListFeatures = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/features`,
    operationId: "adminListFeatures",
    summary: "List every feature (owner)",
    description:
      "Every feature of the project, public or not (awaiting review, denied, archived, merged), filtered and sorted. 422 board for an unknown board slug, 422 column for a column the project (or that board) lacks.",
    request: { params: OwnerSlugParams, query: AdminFeatureListQuery },
    responses: {
      200: jsonContent(listEnvelopeOf(AdminFeatureObject), "One page of features with Meta"),
      ...notModified,
      ...ownerReadErrors,
    },
  }),
);

export const adminGetFeature = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/features/{id}`,
    operationId: "adminGetFeature",
    summary: "Get any feature (owner)",
    description: "One feature by id, public or not. 404 for a feature of no project or another project.",
    request: { params: FeatureParams },
    responses: { 200: jsonContent(envelopeOf(AdminFeatureObject), "The feature"), ...notModified, ...ownerReadErrors },
  }),
);

export const adminCreateFeature = createRoute(
  ownerRoute({
    method: "post",
    path: `${OWNER_PATH}/features`,
    operationId: "adminCreateFeature",
    summary: "Create a feature (owner)",
    description:
      "Files a feature on a board (default the roadmap). Without column_id it goes to the board's first column by position (on the roadmap: the first with `status`, when sent). On the roadmap the column decides the status. 422 naming board, column_id, status, tag_ids or author_voter_id when they do not fit the project.",
    request: { params: OwnerSlugParams, body: jsonBody(AdminFeatureCreateBody, "The feature") },
    responses: { 201: jsonContent(envelopeOf(AdminFeatureObject), "The feature as created"), ...ownerWriteErrors },
  }),
);

export const adminUpdateFeature = createRoute(
  ownerRoute({
    method: "patch",
    path: `${OWNER_PATH}/features/{id}`,
    operationId: "adminUpdateFeature",
    summary: "Change a feature (owner)",
    description:
      "Any field of POST; absent keys are unchanged, null clears a nullable field, an unknown key is 422 naming it. Status and column follow Rule 1; a move to another board sends board and column_id together.",
    request: { params: FeatureParams, body: jsonBody(AdminFeaturePatchBody, "The fields to change") },
    responses: { 200: jsonContent(envelopeOf(AdminFeatureObject), "The feature after the change"), ...ownerWriteErrors },
  }),
);

export const adminDeleteFeature = ownerDeleteRoute({
  path: `${OWNER_PATH}/features/{id}`,
  operationId: "adminDeleteFeature",
  summary: "Delete a feature (owner)",
  description:
    "Removes the feature with its votes, comments, likes, tags and release links; every counter (voters' vote counts, the project's voter count) stays exact.",
  params: FeatureParams,
  gone: "The feature is gone",
});

export const adminMergeFeature = createRoute(
  ownerRoute({
    method: "post",
    path: `${OWNER_PATH}/features/{id}/merge`,
    operationId: "adminMergeFeature",
    summary: "Merge a duplicate into another feature (owner)",
    description:
      "Feature {id} is the duplicate: its votes move to into_id (a voter with both keeps the earlier vote, on the target); it becomes archived with linked_feature and merged_into = the target; comments stay. 409 already_exists when merging into itself, into a merged feature, or a feature already merged; 422 into_id for a feature the project lacks.",
    request: { params: FeatureParams, body: jsonBody(FeatureMergeBody, "The target") },
    responses: { 200: jsonContent(envelopeOf(AdminFeatureObject), "The target after the merge"), ...ownerWriteErrors },
  }),
);

export const adminUnmergeFeature = createRoute(
  ownerRoute({
    method: "post",
    path: `${OWNER_PATH}/features/{id}/unmerge`,
    operationId: "adminUnmergeFeature",
    summary: "Undo a merge (owner)",
    description:
      "Puts back exactly the votes that moved (a voter who had both keeps the target vote and gets the duplicate's back), restores the duplicate's status and column and clears merged_into (and linked_feature if the merge set it). 409 not_found when the feature is not merged.",
    request: { params: FeatureParams },
    responses: { 200: jsonContent(envelopeOf(AdminFeatureObject), "The restored duplicate"), ...ownerWriteErrors },
  }),
);

export const adminListSimilarFeatures = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/features/{id}/similar`,
    operationId: "adminListSimilarFeatures",
    summary: "Merge candidates of a feature (owner)",
    description:
      "The other features of the project, public or not, most similar to this feature's heading (similarity at least 0.3, highest first, then by vote_count); the feature itself and merged duplicates excluded. 404 for a feature of no project or another project.",
    request: { params: FeatureParams, query: SimilarAdminFeaturesQuery },
    responses: {
      200: jsonContent(envelopeOf(z.array(SimilarAdminFeatureObject)), "The merge candidates (meta null)"),
      ...notModified,
      ...ownerReadErrors,
    },
  }),
);
