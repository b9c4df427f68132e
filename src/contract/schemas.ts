/**
 * Components several areas answer with (feedback-board-api-v3.md, "Resources and their fields"):
 * tags, columns, theme colours and the references a FeatureObject carries (board, column,
 * feature, release). One OpenAPI component each, whichever area returns it.
 */
import { z } from "@hono/zod-openapi";
import { FEATURE_STATUSES } from "./enums.ts";
import { extensibleEnum } from "./params.ts";

/** Tag (contract: id is the value of the features `tag` query parameter). */
export const Tag = z
  .object({
    id: z.number().int().openapi({ description: "Tag id; the value of the tag query parameter", example: 3 }),
    name: z.string().openapi({ description: "Tag name", example: "UI" }),
  })
  .openapi("Tag", { description: "A tag features carry" });

export const Column = z
  .object({
    id: z.number().int().openapi({ description: "Value for the column parameter; -1 is the archived column", example: 12 }),
    name: z.string().openapi({ description: "Column heading", example: "Planned" }),
    color: z.string().nullable().openapi({ description: "Hex colour, or null", example: "#3b82f6" }),
    position: z.number().int().openapi({ description: "Left-to-right order; columns arrive sorted", example: 1 }),
    is_votable: z.boolean().openapi({
      description: "Whether a vote on a feature in this column would be accepted (column and project settings)",
      example: true,
    }),
    status: extensibleEnum(
      FEATURE_STATUSES,
      "Status the features in this column report (a feature status, so it may gain members too); null on a custom board column",
      "planned",
    ).nullable(),
  })
  .openapi("Column", { description: "A column of a board; -1 is the archived column" });
export type Column = z.infer<typeof Column>;

export const ThemeColors = z
  .object({
    accent: z.string().openapi({ description: "Accent colour", example: "#4f46e5" }),
    background: z.string().openapi({ description: "Background (hex colour)", example: "#ffffff" }),
    border: z.string().openapi({ description: "Border colour", example: "#e5e7eb" }),
    card_background: z.string().openapi({ description: "Card background colour", example: "#f9fafb" }),
    text: z.string().openapi({ description: "Text colour", example: "#111827" }),
    text_secondary: z.string().openapi({ description: "Secondary text colour", example: "#6b7280" }),
  })
  .openapi("ThemeColors", { description: "Palette for one ground (dark or light); all strings" });

export const BoardRef = z
  .object({
    id: z.number().int().openapi({ description: "Board id; 0 for the roadmap", example: 0 }),
    kind: z.enum(["roadmap", "custom"]).openapi({ description: "roadmap or custom", example: "roadmap" }),
    name: z.string().openapi({ description: "Board name", example: "Roadmap" }),
    slug: z.string().openapi({ description: "Board slug; the value of the board parameter", example: "roadmap" }),
  })
  .openapi("BoardRef");

export const ColumnRef = z
  .object({
    id: z.number().int().openapi({ description: "Column id; -1 is the archived column", example: 12 }),
    name: z.string().openapi({ description: "Column name", example: "Planned" }),
    color: z.string().nullable().openapi({ description: "Hex colour, or null", example: "#3b82f6" }),
  })
  .openapi("ColumnRef");

export const FeatureRef = z
  .object({
    id: z.number().int().openapi({ description: "Feature id", example: 40 }),
    heading: z.string().openapi({ description: "Feature heading", example: "Night theme" }),
  })
  .openapi("FeatureRef");

export const ReleaseRef = z
  .object({
    id: z.number().int().openapi({ description: "Release id", example: 2 }),
    name: z.string().openapi({ description: "Release name", example: "1.4" }),
  })
  .openapi("ReleaseRef");
