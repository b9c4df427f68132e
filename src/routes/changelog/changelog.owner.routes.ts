/** Owner release routes (owner-api-v3.md, Routes: GET/POST /releases, GET/PATCH/DELETE /releases/{id}; Rule 4). */
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
import { idParam, PageQuery } from "../../contract/params.ts";
import { AdminReleaseObject, ReleaseCreateBody, ReleasePatchBody } from "./changelog.owner.schemas.ts";

const ReleaseParams = OwnerSlugParams.extend({ id: idParam("id", "Release id") });
const rules =
  "body is markdown, rendered to body_html when written (raw HTML refused, dangerous link schemes blanked). " +
  "published_at null is a draft; in the future, scheduled: the release becomes public by itself at that time on every " +
  "instance, with no request; now or past, published. The slug is unique in the project (409 already_exists). A feature " +
  "of another project, an unknown one or one listed twice is 422 naming features[i].feature_id.";

export const adminListReleases = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/releases`,
    operationId: "adminListReleases",
    summary: "Every release: drafts, scheduled and published",
    description: "Every release of the project, newest first (id descending), with status and every feature, public or not.",
    request: { params: OwnerSlugParams, query: z.object(PageQuery) },
    responses: { 200: jsonContent(listEnvelopeOf(AdminReleaseObject), "A page of releases"), ...notModified, ...ownerReadErrors },
  }),
);

export const adminCreateRelease = createRoute(
  ownerRoute({
    method: "post",
    path: `${OWNER_PATH}/releases`,
    operationId: "adminCreateRelease",
    summary: "Create a release",
    description: `name is required. ${rules}`,
    request: {
      params: OwnerSlugParams,
      body: {
        required: true,
        content: {
          "application/json": {
            schema: ReleaseCreateBody,
            example: {
              name: "1.5",
              body: "## New\n- Dark mode",
              published_at: "2026-12-01T09:00:00Z",
              features: [{ feature_id: 41, changelog_type: "new" }],
            },
          },
        },
      },
    },
    responses: { 201: jsonContent(envelopeOf(AdminReleaseObject), "The new release"), ...ownerWriteErrors },
  }),
);

export const adminGetRelease = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/releases/{id}`,
    operationId: "adminGetRelease",
    summary: "One release in any state",
    description: "The release with its status and every feature, public or not.",
    request: { params: ReleaseParams },
    responses: { 200: jsonContent(envelopeOf(AdminReleaseObject), "The release"), ...notModified, ...ownerReadErrors },
  }),
);

export const adminUpdateRelease = createRoute(
  ownerRoute({
    method: "patch",
    path: `${OWNER_PATH}/releases/{id}`,
    operationId: "adminUpdateRelease",
    summary: "Change, schedule, publish or unpublish a release",
    description: `Any field of POST; features, when sent, replaces the whole list. ${rules}`,
    request: {
      params: ReleaseParams,
      body: {
        required: true,
        content: { "application/json": { schema: ReleasePatchBody, example: { published_at: "2026-12-01T09:00:00Z" } } },
      },
    },
    responses: { 200: jsonContent(envelopeOf(AdminReleaseObject), "The release after the change"), ...ownerWriteErrors },
  }),
);

export const adminDeleteRelease = ownerDeleteRoute({
  path: `${OWNER_PATH}/releases/{id}`,
  operationId: "adminDeleteRelease",
  summary: "Delete a release",
  description: "Deletes the release; its features stay and no longer show it as their release.",
  params: ReleaseParams,
  gone: "The release is gone",
});
