/** Owner tag routes (owner-api-v3.md, Routes: GET/POST /tags, PATCH/DELETE /tags/{tag_id}). */
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
import { TagCreateBody, TagObject, TagPatchBody } from "./tags.owner.schemas.ts";

const TagParams = OwnerSlugParams.extend({ tag_id: idParam("tag_id", "Tag id") });

export const adminListTags = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/tags`,
    operationId: "adminListTags",
    summary: "Every tag with its feature count",
    description: "Every tag of the project by name (case-insensitive), with the number of features carrying it, public or not.",
    request: { params: OwnerSlugParams, query: z.object(PageQuery) },
    responses: { 200: jsonContent(listEnvelopeOf(TagObject), "A page of tags"), ...notModified, ...ownerReadErrors },
  }),
);

export const adminCreateTag = createRoute(
  ownerRoute({
    method: "post",
    path: `${OWNER_PATH}/tags`,
    operationId: "adminCreateTag",
    summary: "Create a tag",
    description: 'A tag name is unique in the project ignoring case: a second "ui" beside "UI" answers 409 already_exists.',
    request: {
      params: OwnerSlugParams,
      body: { required: true, content: { "application/json": { schema: TagCreateBody, example: { name: "Mobile" } } } },
    },
    responses: { 201: jsonContent(envelopeOf(TagObject), "The new tag"), ...ownerWriteErrors },
  }),
);

export const adminUpdateTag = createRoute(
  ownerRoute({
    method: "patch",
    path: `${OWNER_PATH}/tags/{tag_id}`,
    operationId: "adminUpdateTag",
    summary: "Rename a tag",
    description: "Renames the tag everywhere it is shown. Another tag's name (ignoring case): 409 already_exists.",
    request: {
      params: TagParams,
      body: { required: true, content: { "application/json": { schema: TagPatchBody, example: { name: "iOS" } } } },
    },
    responses: { 200: jsonContent(envelopeOf(TagObject), "The tag after the change"), ...ownerWriteErrors },
  }),
);

export const adminDeleteTag = ownerDeleteRoute({
  path: `${OWNER_PATH}/tags/{tag_id}`,
  operationId: "adminDeleteTag",
  summary: "Delete a tag",
  description: "Deletes the tag and removes it from every feature that carried it.",
  params: TagParams,
  gone: "The tag is gone",
});
