/** The subscriptions area's contract objects (engagement-api-v3.md, "Subscriptions"). */
import { z } from "@hono/zod-openapi";
import { SUBSCRIPTION_REASONS } from "../../contract/enums.ts";
import { extensibleEnum } from "../../contract/params.ts";
import { FeatureRef } from "../../contract/schemas.ts";

export const SubscriptionObject = z
  .object({
    feature: FeatureRef,
    reason: extensibleEnum(
      SUBSCRIPTION_REASONS,
      "Why the voter follows it: author (suggested it), vote, comment, manual (PUT) or merge (followed a duplicate merged into it); tolerate added members",
      "vote",
    ),
    created_at: z.string().openapi({ description: "When the subscription began, RFC 3339 UTC", example: "2026-11-20T09:30:00.000Z" }),
  })
  .openapi("SubscriptionObject");

export type SubscriptionObject = z.infer<typeof SubscriptionObject>;

export const SubscriptionDeletedObject = z
  .object({
    feature_id: z.number().int().openapi({ description: "Feature unsubscribed from", example: 41 }),
    subscribed: z
      .literal(false)
      .openapi({ description: "Always false: the voter is not subscribed (an opt-out is recorded)", example: false }),
  })
  .openapi("SubscriptionDeletedObject");

export type SubscriptionDeletedObject = z.infer<typeof SubscriptionDeletedObject>;
