/**
 * Bodies of the owner board and column routes (owner-api-v3.md, Routes /boards, /columns).
 * Answers reuse the public BoardEntry and Column components (board.schemas.ts).
 */
import { z } from "@hono/zod-openapi";
import { FEATURE_STATUSES } from "../../contract/enums.ts";
import { patchBodyOf } from "../../contract/owner-routes.ts";

/** Board slugs: the project slug's pattern (snapshot spec), sent as the public `board` parameter. */
export const BOARD_SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** #rgb or #rrggbb. */
export const HEX_COLOR_PATTERN = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
/**
 * Statuses a roadmap column may carry: every feature status but "archived", which belongs to the
 * archived column (id -1, not a row) on every board (owner-api-v3.md, Rule 1).
 */
export const COLUMN_STATUSES = FEATURE_STATUSES.filter((status) => status !== "archived") as [string, ...string[]];

const name = z.string().trim().min(1, "must not be blank").max(100).openapi({ description: "1..100 characters", example: "Mobile" });
const slug = z.string().regex(BOARD_SLUG_PATTERN, "must match ^[a-z0-9][a-z0-9-]{0,62}$").openapi({
  description: 'Unique in the project (409 already_exists); "roadmap" names the roadmap',
  example: "mobile",
});
const position = z.number().int().min(0).max(1_000_000).openapi({ description: "Order among its siblings, ascending", example: 1 });

export const BoardCreateBody = z.object({ name, slug }).strict().openapi("BoardCreate");
export const BoardPatchBody = patchBodyOf({ name, slug, position }).openapi("BoardPatch", {
  description: "Custom boards take name, slug and position; the roadmap (id 0) takes name only (422 naming any other field)",
});

const columnFields = {
  name: z.string().trim().min(1, "must not be blank").max(100).openapi({ description: "Column heading", example: "Planned" }),
  color: z.string().regex(HEX_COLOR_PATTERN, "must be a hex colour such as #3b82f6").nullable().openapi({
    description: "#rgb or #rrggbb, or null",
    example: "#3b82f6",
  }),
  position,
  is_votable: z.boolean().openapi({ description: "Whether the column takes votes", example: true }),
  status: z.enum(COLUMN_STATUSES).openapi({
    description: "Roadmap columns only (required there; 422 on a custom board): the status its features report",
    example: "planned",
  }),
};

export const ColumnCreateBody = z
  .object({
    ...columnFields,
    color: columnFields.color.default(null),
    position: columnFields.position.optional().openapi({ description: "Default: after the board's last column" }),
    is_votable: columnFields.is_votable.default(true),
    status: columnFields.status.optional(),
  })
  .strict()
  .openapi("ColumnCreate");

export const ColumnPatchBody = patchBodyOf(columnFields).openapi("ColumnPatch", {
  description: "Changing a roadmap column's status changes the status of every feature in it (Rule 1: the column decides)",
});
