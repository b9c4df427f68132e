/** The votes area's contract object (contract, "Resources and their fields", VoteObject). */
import { z } from "@hono/zod-openapi";

export const VoteObject = z
  .object({
    feature_id: z.number().int().openapi({ description: "Feature voted on", example: 41 }),
    has_voted: z.boolean().openapi({ description: "true after a vote, false after a withdrawal", example: true }),
    vote_count: z.number().int().nullable().openapi({ description: "Votes after the change; null when votes are hidden", example: 18 }),
    score: z.number().int().nullable().openapi({
      description: "Weighted total when the project weights votes, plain count otherwise; null when votes are hidden",
      example: 26,
    }),
  })
  .openapi("VoteObject");

export type VoteObject = z.infer<typeof VoteObject>;
