/** Board document routes (contract, "Reading a board": GET /board and GET /projects/{slug}). */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent, notModified } from "../../contract/envelope.ts";
import { readErrors } from "../../contract/errors.ts";
import { SlugParam } from "../../contract/params.ts";
import { describedRoute } from "../../contract/route-description.ts";
import { sharedReadCache } from "../../middleware/shared-read-cache.ts";
import { BoardDocument } from "./board.schemas.ts";

const description =
  "Board structure (roadmap first, then custom boards; columns in drawing order), every tag, " +
  "capabilities, display settings, project identity and theme. The denied column is left out " +
  "when display.show_denied is false; the archived column (id -1) is added to every board when " +
  "display.show_archived is true. 403 also means the project's settings hide what the route returns.";

export const getKeyBoard = createRoute(
  describedRoute(
    { kind: "read" },
    {
      method: "get",
      path: "/board",
      operationId: "getKeyBoard",
      summary: "Board document of the key's project",
      description: `The board document of the project the key (secret or embed) belongs to. ${description}`,
      tags: ["Board"],
      middleware: [sharedReadCache({ sameForEveryReader: true })] as const,
      responses: {
        200: jsonContent(envelopeOf(BoardDocument), "The board document"),
        ...notModified,
        ...readErrors,
      },
    },
  ),
);

export const getProjectBoard = createRoute(
  describedRoute(
    { kind: "read" },
    {
      method: "get",
      path: "/projects/{slug}",
      operationId: "getProjectBoard",
      summary: "Board document of a project",
      description: `The board document of the project named in the path; the key must belong to it. ${description}`,
      tags: ["Board"],
      middleware: [sharedReadCache({ sameForEveryReader: true })] as const,
      request: { params: z.object({ slug: SlugParam }) },
      responses: {
        200: jsonContent(envelopeOf(BoardDocument), "The board document"),
        ...notModified,
        ...readErrors,
      },
    },
  ),
);
