/** Owner message routes (owner-api-v3.md, Routes: GET/POST /messages, GET/PATCH/DELETE /messages/{id}). */
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
import { MessageCreateBody, MessagePatchBody } from "./messages.owner.schemas.ts";
import { AdminMessageObject } from "./messages.schemas.ts";

const MessageParams = OwnerSlugParams.extend({ id: idParam("id", "Message id") });
const rules =
  "action_label without action_url: 422 action_url; an invalid semver bound: 422 naming it (min above max: 422 " +
  "min_app_version); ends_at before starts_at: 422 ends_at.";

export const adminListMessages = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/messages`,
    operationId: "adminListMessages",
    summary: "Every message, past and future",
    description: "Every message of the project whatever its dates and targeting: priority descending, then newest first.",
    request: { params: OwnerSlugParams, query: z.object(PageQuery) },
    responses: { 200: jsonContent(listEnvelopeOf(AdminMessageObject), "A page of messages"), ...notModified, ...ownerReadErrors },
  }),
);

export const adminCreateMessage = createRoute(
  ownerRoute({
    method: "post",
    path: `${OWNER_PATH}/messages`,
    operationId: "adminCreateMessage",
    summary: "Create a message",
    description: `title and body are required. ${rules}`,
    request: {
      params: OwnerSlugParams,
      body: {
        required: true,
        content: {
          "application/json": {
            schema: MessageCreateBody,
            example: { title: "New widget", body: "Add it from the home screen.", platforms: ["ios"], min_app_version: "2.4.0" },
          },
        },
      },
    },
    responses: { 201: jsonContent(envelopeOf(AdminMessageObject), "The new message"), ...ownerWriteErrors },
  }),
);

export const adminGetMessage = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/messages/{id}`,
    operationId: "adminGetMessage",
    summary: "One message",
    description: "The message whatever its dates and targeting.",
    request: { params: MessageParams },
    responses: { 200: jsonContent(envelopeOf(AdminMessageObject), "The message"), ...notModified, ...ownerReadErrors },
  }),
);

export const adminUpdateMessage = createRoute(
  ownerRoute({
    method: "patch",
    path: `${OWNER_PATH}/messages/{id}`,
    operationId: "adminUpdateMessage",
    summary: "Change a message",
    description: `Any field of POST; null clears a nullable one. The rules are checked on the message as it will be stored: ${rules}`,
    request: {
      params: MessageParams,
      body: { required: true, content: { "application/json": { schema: MessagePatchBody, example: { ends_at: "2026-12-01T00:00:00Z" } } } },
    },
    responses: { 200: jsonContent(envelopeOf(AdminMessageObject), "The message after the change"), ...ownerWriteErrors },
  }),
);

export const adminDeleteMessage = ownerDeleteRoute({
  path: `${OWNER_PATH}/messages/{id}`,
  operationId: "adminDeleteMessage",
  summary: "Delete a message",
  description: "Deletes the message and its dismissals.",
  params: MessageParams,
  gone: "The message is gone",
});
