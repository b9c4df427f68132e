/** The owner's settings routes (owner-api-v3.md, "Routes": GET, PATCH /settings; Rule 8). */
import { createRoute } from "@hono/zod-openapi";
import { envelopeOf, jsonContent, notModified } from "../../contract/envelope.ts";
import { OWNER_PATH, OwnerSlugParams, ownerReadErrors, ownerRoute, ownerWriteErrors } from "../../contract/owner-routes.ts";
import { SettingsObject, SettingsPatchBody } from "./settings.owner.schemas.ts";

export const adminGetSettings = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/settings`,
    operationId: "adminGetSettings",
    summary: "Get the project's settings",
    description: "Project fields, display settings and theme. Secrets are write-only: only whether each is set is shown.",
    request: { params: OwnerSlugParams },
    responses: {
      200: jsonContent(envelopeOf(SettingsObject), "The settings"),
      ...notModified,
      ...ownerReadErrors,
    },
  }),
);

export const adminUpdateSettings = createRoute(
  ownerRoute({
    method: "patch",
    path: `${OWNER_PATH}/settings`,
    operationId: "adminUpdateSettings",
    summary: "Change the project's settings",
    description:
      "Partial update; settings, theme and theme.light / theme.dark are merged key by key. Secrets are sent as strings " +
      "(null clears them) and never returned. Takes effect on the next public read on every instance; a new sso_secret " +
      "makes tokens signed with the old one answer 401 identity_invalid while voters keep their history.",
    request: {
      params: OwnerSlugParams,
      body: { content: { "application/json": { schema: SettingsPatchBody } }, required: true },
    },
    responses: {
      200: jsonContent(envelopeOf(SettingsObject), "The settings after the change"),
      ...ownerWriteErrors,
    },
  }),
);
