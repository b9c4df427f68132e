/**
 * The owner's voter objects (owner-api-v3.md, "Objects"): AdminVoterObject is every
 * RevenueVoterObject field but `votes`, plus the voter's identity, moderation and billing links;
 * the PATCH body takes the fields Rule 6 names.
 */
import { z } from "@hono/zod-openapi";
import { patchBodyOf } from "../../contract/owner-routes.ts";
import { MAX_ID } from "../../contract/params.ts";
import { RevenueVoterObject } from "../revenue/index.ts";

const nullableString = (description: string, example: string | null) => z.string().nullable().openapi({ description, example });

export const AdminVoterObject = RevenueVoterObject.omit({ votes: true })
  .extend({
    kind: z.enum(["anonymous", "sso"]).openapi({ description: "How the voter identifies: anonymous token or SSO", example: "sso" }),
    email: nullableString("Email address, from SSO or set by the owner", "ada@example.com"),
    sso_id: nullableString("The SSO `sub` this voter answers to; null for anonymous voters", "user-42"),
    role: z.enum(["owner", "editor", "viewer"]).nullable().openapi({
      description: "Team role shown as the comment author_role; null for ordinary voters",
      example: null,
    }),
    banned: z.boolean().openapi({ description: "Banned voters may not suggest or comment (they may still vote)", example: false }),
    email_unsubscribed: z.boolean().openapi({
      description: "The voter unsubscribed from the project's emails (engagement-api-v3.md, Unsubscribe); no email is sent to them",
      example: false,
    }),
    mrr_override_cents: z.number().int().nullable().openapi({
      description: "Monthly worth set on the voter in cents, overriding the tier amount; null when none",
      example: null,
    }),
    stripe_customer_id: nullableString("Stripe customer id", "cus_Q2w3E4r5T6"),
    paddle_customer_id: nullableString("Paddle customer id", null),
    created_at: z.string().openapi({ description: "When the voter was first seen, RFC 3339 UTC", example: "2026-10-02T09:15:00.000Z" }),
  })
  .openapi("AdminVoterObject");

export type AdminVoterObject = z.infer<typeof AdminVoterObject>;

const CENTS_MAX = 2147483647;

/** PATCH /voters/{voter_id} (Rule 6): every key optional, null clears a nullable field. */
export const VoterPatchBody = patchBodyOf({
  display_name: z.string().trim().min(1).max(200).openapi({ description: "Name shown for the voter", example: "Ada Lovelace" }),
  email: z.email().max(254).nullable().openapi({ description: "Email address; null clears it", example: "ada@example.com" }),
  role: z.enum(["owner", "editor", "viewer"]).nullable().openapi({
    description: "Team role (owner and editor may author owner comments); null clears it",
    example: "editor",
  }),
  banned: z.boolean().openapi({
    description: "Ban or unban; takes effect on the voter's next write on every instance",
    example: true,
  }),
  company: z.string().max(200).nullable().openapi({ description: "Company; null clears it", example: "Analytical Engines Ltd" }),
  tier_id: z.number().int().min(1).max(MAX_ID).nullable().openapi({
    description: "A tier of this project (422 tier_id otherwise); null removes the tier. Votes already cast keep their weight",
    example: 2,
  }),
  mrr_override_cents: z.number().int().min(0).max(CENTS_MAX).nullable().openapi({
    description: "Monthly worth in cents overriding the tier amount; null removes the override",
    example: 25000,
  }),
  stripe_customer_id: z
    .string()
    .min(1)
    .max(255)
    .nullable()
    .openapi({ description: "Stripe customer id; null clears it", example: "cus_Q2w3E4r5T6" }),
  paddle_customer_id: z
    .string()
    .min(1)
    .max(255)
    .nullable()
    .openapi({ description: "Paddle customer id; null clears it", example: "ctm_01h8" }),
  email_unsubscribed: z.boolean().openapi({
    description:
      "false clears an unsubscribe (the voter receives the project's emails again); true unsubscribes the voter, as their unsubscribe link does",
    example: false,
  }),
  churned: z.boolean().openapi({
    description:
      "true records churn now with churn_source manual (a voter already churned keeps its record); " +
      "false clears churned, churned_at and churn_source",
    example: true,
  }),
}).openapi("PatchVoterBody");

export type VoterPatchBody = z.infer<typeof VoterPatchBody>;
