/** Changelog routes (contract, "Reading a board": GET .../changelog and .../changelog/{id}). */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent, listEnvelopeOf, notModified } from "../../contract/envelope.ts";
import { readErrors } from "../../contract/errors.ts";
import { idParam, PageQuery, SlugParam } from "../../contract/params.ts";
import { describedRoute } from "../../contract/route-description.ts";
import { sharedReadCache } from "../../middleware/shared-read-cache.ts";
import { ReleaseObject } from "./changelog.schemas.ts";

export const listReleases = createRoute(
  describedRoute(
    { kind: "read" },
    {
      method: "get",
      path: "/projects/{slug}/changelog",
      operationId: "listReleases",
      summary: "Published releases",
      description:
        "Published releases only (drafts and releases scheduled for later are never public): featured " +
        "releases first, then the most recently published, then by id descending.",
      tags: ["Changelog"],
      middleware: [sharedReadCache({ sameForEveryReader: true })] as const,
      request: { params: z.object({ slug: SlugParam }), query: z.object(PageQuery) },
      responses: {
        200: jsonContent(listEnvelopeOf(ReleaseObject), "A page of releases"),
        ...notModified,
        ...readErrors,
      },
    },
  ),
);

export const getRelease = createRoute(
  describedRoute(
    { kind: "read" },
    {
      method: "get",
      path: "/projects/{slug}/changelog/{id}",
      operationId: "getRelease",
      summary: "One published release",
      description: "The release with its note and the features it shipped. A draft answers 404 not_found.",
      tags: ["Changelog"],
      middleware: [sharedReadCache({ sameForEveryReader: true })] as const,
      request: { params: z.object({ slug: SlugParam, id: idParam("id", "Release id") }) },
      responses: {
        200: jsonContent(envelopeOf(ReleaseObject), "The release"),
        ...notModified,
        ...readErrors,
      },
    },
  ),
);
