/**
 * Owner board and column routes (owner-api-v3.md, Routes: POST /boards, PATCH/DELETE
 * /boards/{board_id}, POST /boards/{board_id}/columns, PATCH/DELETE /columns/{column_id}).
 */
import { createRoute } from "@hono/zod-openapi";
import { envelopeOf, jsonContent } from "../../contract/envelope.ts";
import { OWNER_PATH, OwnerSlugParams, ownerDeleteRoute, ownerRoute, ownerWriteErrors } from "../../contract/owner-routes.ts";
import { idParam, integerParam, MAX_ID } from "../../contract/params.ts";
import { Column } from "../../contract/schemas.ts";
import { BoardCreateBody, BoardPatchBody, ColumnCreateBody, ColumnPatchBody } from "./board.owner.schemas.ts";
import { BoardEntry } from "./board.schemas.ts";

const BoardParams = OwnerSlugParams.extend({
  board_id: integerParam(0, MAX_ID).openapi({
    param: { name: "board_id", in: "path" },
    description: "Board id; 0 is the roadmap",
    example: 0,
  }),
});
const ColumnParams = OwnerSlugParams.extend({ column_id: idParam("column_id", "Column id") });

const json = <T>(schema: T, example: unknown) => ({ required: true, content: { "application/json": { schema, example } } });

export const adminCreateBoard = createRoute(
  ownerRoute({
    method: "post",
    path: `${OWNER_PATH}/boards`,
    operationId: "adminCreateBoard",
    summary: "Create a custom board",
    description:
      'A new custom board, with no columns, after the others. Its slug is unique in the project (409 already_exists); "roadmap" names the roadmap.',
    request: { params: OwnerSlugParams, body: json(BoardCreateBody, { name: "Mobile", slug: "mobile" }) },
    responses: { 201: jsonContent(envelopeOf(BoardEntry), "The new board"), ...ownerWriteErrors },
  }),
);

export const adminUpdateBoard = createRoute(
  ownerRoute({
    method: "patch",
    path: `${OWNER_PATH}/boards/{board_id}`,
    operationId: "adminUpdateBoard",
    summary: "Rename, re-slug or move a board",
    description:
      "Custom boards take name, slug and position; the roadmap (id 0) takes name only: slug or position on it is 422 naming the field.",
    request: { params: BoardParams, body: json(BoardPatchBody, { name: "Mobile apps" }) },
    responses: { 200: jsonContent(envelopeOf(BoardEntry), "The board after the change"), ...ownerWriteErrors },
  }),
);

export const adminDeleteBoard = ownerDeleteRoute({
  path: `${OWNER_PATH}/boards/{board_id}`,
  operationId: "adminDeleteBoard",
  summary: "Delete a custom board",
  description: "Deletes an empty custom board with its columns. A board that holds features, or the roadmap, answers 409 in_use.",
  params: BoardParams,
  gone: "The board is gone",
});

export const adminCreateColumn = createRoute(
  ownerRoute({
    method: "post",
    path: `${OWNER_PATH}/boards/{board_id}/columns`,
    operationId: "adminCreateColumn",
    summary: "Add a column to a board",
    description: "status is required on the roadmap and refused on a custom board (422 status). Without position the column goes last.",
    request: {
      params: BoardParams,
      body: json(ColumnCreateBody, { name: "Planned", color: "#3b82f6", is_votable: true, status: "planned" }),
    },
    responses: { 201: jsonContent(envelopeOf(Column), "The new column"), ...ownerWriteErrors },
  }),
);

export const adminUpdateColumn = createRoute(
  ownerRoute({
    method: "patch",
    path: `${OWNER_PATH}/columns/{column_id}`,
    operationId: "adminUpdateColumn",
    summary: "Change a column",
    description:
      "Changing a roadmap column's status changes the status of every feature in it (on the roadmap the column decides the " +
      "status); status on a custom board's column is 422. Counters are unaffected.",
    request: { params: ColumnParams, body: json(ColumnPatchBody, { name: "Next up" }) },
    responses: { 200: jsonContent(envelopeOf(Column), "The column after the change"), ...ownerWriteErrors },
  }),
);

export const adminDeleteColumn = ownerDeleteRoute({
  path: `${OWNER_PATH}/columns/{column_id}`,
  operationId: "adminDeleteColumn",
  summary: "Delete an empty column",
  description: "A column that holds features answers 409 in_use (move or delete them first).",
  params: ColumnParams,
  gone: "The column is gone",
});
