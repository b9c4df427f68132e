/**
 * Tiers (owner-api-v3.md, "Objects": TierObject; routes /tiers): a paying level with its monthly
 * amount, its vote multiplier and the billing systems' price ids that map a subscription to it.
 */
import { z } from "@hono/zod-openapi";
import { patchBodyOf } from "../../contract/owner-routes.ts";

export const TierObject = z
  .object({
    id: z.number().int().openapi({ description: "Tier id", example: 2 }),
    name: z.string().openapi({ description: "Tier name", example: "Business" }),
    mrr_cents: z.number().int().openapi({ description: "Monthly worth of a voter on this tier, in cents", example: 19900 }),
    multiplier: z.number().int().openapi({
      description: "Weight of a vote cast by a voter on this tier (at least 1); votes keep the weight they were cast with",
      example: 5,
    }),
    stripe_price_ids: z.array(z.string()).openapi({
      description: "Stripe price ids that put a subscriber on this tier (each unique across the project's tiers)",
      example: ["price_1PqBusinessMonthly"],
    }),
    paddle_price_ids: z.array(z.string()).openapi({
      description: "Paddle price ids that put a subscriber on this tier (each unique across the project's tiers)",
      example: [],
    }),
    voter_count: z.number().int().openapi({ description: "Voters currently on this tier", example: 14 }),
  })
  .openapi("TierObject");

export type TierObject = z.infer<typeof TierObject>;

/** Largest multiplier: weighted scores are 32-bit sums of vote weights. */
export const MAX_MULTIPLIER = 1000;

const priceIds = (system: string, example: string[]) =>
  z
    .array(z.string().min(1).max(255))
    .max(100)
    .refine((ids) => new Set(ids).size === ids.length, { message: "must not list a price id twice" })
    .openapi({
      description: `${system} price ids mapped to this tier; at most 100, each unique across the project's tiers (409 already_exists otherwise)`,
      example,
    });

const tierFields = {
  name: z.string().trim().min(1).max(100).openapi({ description: "Tier name", example: "Business" }),
  mrr_cents: z.number().int().min(0).max(2147483647).openapi({ description: "Monthly worth in cents", example: 19900 }),
  multiplier: z
    .number()
    .int()
    .min(1)
    .max(MAX_MULTIPLIER)
    .openapi({
      description: `Vote weight, 1..${MAX_MULTIPLIER}; applies to votes cast from now on`,
      example: 5,
    }),
  stripe_price_ids: priceIds("Stripe", ["price_1PqBusinessMonthly"]),
  paddle_price_ids: priceIds("Paddle", []),
};

export const TierCreateBody = z
  .object({
    ...tierFields,
    multiplier: tierFields.multiplier.default(1),
    stripe_price_ids: tierFields.stripe_price_ids.default([]),
    paddle_price_ids: tierFields.paddle_price_ids.default([]),
  })
  .strict()
  .openapi("CreateTierBody");

export const TierPatchBody = patchBodyOf(tierFields).openapi("PatchTierBody");

export type TierCreateBody = z.infer<typeof TierCreateBody>;
export type TierPatchBody = z.infer<typeof TierPatchBody>;
