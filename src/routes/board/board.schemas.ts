/**
 * The board document of the contract ("Resources and their fields", BoardDocument): boards and
 * columns, tags, capabilities, display settings, project identity and theme. Tag, Column and
 * ThemeColors are shared components (src/contract/schemas.ts).
 */
import { z } from "@hono/zod-openapi";
import { Column, Tag, ThemeColors } from "../../contract/schemas.ts";

export const BoardEntry = z
  .object({
    id: z.number().int().openapi({ description: "Board id; 0 for the roadmap", example: 0 }),
    kind: z.enum(["roadmap", "custom"]).openapi({ description: "roadmap (exactly one per project) or custom", example: "roadmap" }),
    name: z.string().openapi({ description: "Board name", example: "Roadmap" }),
    slug: z.string().openapi({ description: "Send as the board parameter", example: "roadmap" }),
    columns: z.array(Column).openapi({ description: "Columns in drawing order" }),
  })
  .openapi("BoardEntry", { description: "One board and its columns" });

const BoardCapabilities = z
  .object({
    can_comment: z.boolean().openapi({ description: "Draw a comment box", example: true }),
    can_like: z.boolean().openapi({ description: "Draw a like control on comments", example: true }),
    can_suggest: z.boolean().openapi({ description: "Offer the suggestion form", example: true }),
    can_vote: z.boolean().openapi({ description: "Draw a vote control anywhere", example: true }),
  })
  .openapi("BoardCapabilities", { description: "Which controls a client should draw" });

const BoardDisplay = z
  .object({
    allow_comments: z.boolean().openapi({ description: "Project accepts comments", example: true }),
    allow_suggestions: z.boolean().openapi({ description: "Project accepts suggestions", example: true }),
    allow_voting: z.boolean().openapi({ description: "Project accepts votes at all; a column may still refuse", example: true }),
    default_mode: z.string().openapi({ description: "View the hosted board opens on", example: "roadmap" }),
    score_is_weighted: z.boolean().openapi({ description: "Score is the weighted total", example: false }),
    show_archived: z.boolean().openapi({ description: "The archived column (id -1) exists", example: false }),
    show_comments: z.boolean().openapi({ description: "false makes comment_count null and closes the comment routes", example: true }),
    show_denied: z.boolean().openapi({ description: "false removes the denied column and its features", example: true }),
    show_progress: z.boolean().openapi({ description: "false makes progress null", example: true }),
    show_views: z.boolean().openapi({ description: "false makes view_count null", example: true }),
    show_votes: z.boolean().openapi({ description: "false makes vote_count and score null", example: true }),
  })
  .openapi("BoardDisplay", { description: "Display settings of the project" });

const BoardProject = z
  .object({
    banner_url: z.string().nullable().openapi({ description: "Absolute address of the banner", example: null }),
    currency_symbol: z.string().openapi({ description: "Symbol placed before a money figure", example: "$" }),
    description: z.string().nullable().openapi({ description: "Line under the name", example: "Tell us what to build" }),
    logo_url: z.string().nullable().openapi({ description: "Absolute address of the logo", example: "https://cdn.example/logo.png" }),
    name: z.string().openapi({ description: "Project name", example: "Lumen" }),
    show_branding: z.boolean().openapi({ description: "Whether the hosted board shows the product's branding line", example: true }),
    slug: z.string().openapi({ description: "Name used in every path", example: "lumen" }),
    voter_count: z.number().int().openapi({
      description: "Distinct people who voted on a public suggestion; denominator for a share of voters",
      example: 128,
    }),
  })
  .openapi("BoardProject", { description: "Project identity" });

const BoardTheme = z
  .object({
    dark: ThemeColors,
    light: ThemeColors,
    font: z.string().openapi({ description: "Font family the hosted board loads", example: "Inter" }),
    radius: z.string().openapi({ description: "Corner radius as a CSS length", example: "8px" }),
  })
  .openapi("BoardTheme", {
    description: "Colours, font and corner radius: dark is the palette for a dark ground, light for a light one",
  });

export const BoardDocument = z
  .object({
    boards: z.array(BoardEntry).openapi({ description: "Every public board, roadmap first" }),
    tags: z.array(Tag).openapi({ description: "Every tag in the project, by name" }),
    capabilities: BoardCapabilities,
    display: BoardDisplay,
    project: BoardProject,
    theme: BoardTheme,
  })
  .openapi("BoardDocument", { description: "Board structure, tags, capabilities, display settings, project and theme" });

export type BoardDocument = z.infer<typeof BoardDocument>;
export type BoardEntry = z.infer<typeof BoardEntry>;
