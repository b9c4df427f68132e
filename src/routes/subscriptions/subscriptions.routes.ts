/**
 * Route definitions of the subscriptions area (engagement-api-v3.md, "Subscriptions"): voter
 * routes taking the project key and a voter identity, counted against the key's read or write
 * budget like the public routes.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent, listEnvelopeOf, notModified } from "../../contract/envelope.ts";
import { readErrors, writeErrors } from "../../contract/errors.ts";
import { idParam, PageQuery, SlugParam } from "../../contract/params.ts";
import { describedRoute } from "../../contract/route-description.ts";
import { SubscriptionDeletedObject, SubscriptionObject } from "./subscriptions.schemas.ts";

const featureParams = z.object({ slug: SlugParam, id: idParam("id", "Feature id") });

export const listSubscriptions = createRoute(
  describedRoute(
    { kind: "read", voter: "required" },
    {
      method: "get",
      path: "/projects/{slug}/subscriptions",
      operationId: "listSubscriptions",
      summary: "The voter's subscriptions",
      description:
        "Features the voter follows, newest subscription first; only features the voter can see (as on the public routes, plus " +
        "the features they suggested). Opt-outs are not listed. 401 identity_required without an identity. A valid SSO token of " +
        "a user never seen before answers an empty list.",
      tags: ["Subscriptions"],
      request: { params: z.object({ slug: SlugParam }), query: z.object(PageQuery) },
      responses: {
        200: jsonContent(listEnvelopeOf(SubscriptionObject), "A page of subscriptions"),
        ...notModified,
        ...readErrors,
      },
    },
  ),
);

export const subscribeToFeature = createRoute(
  describedRoute(
    { kind: "write" },
    {
      method: "put",
      path: "/projects/{slug}/features/{id}/subscription",
      operationId: "subscribeToFeature",
      summary: "Subscribe to a feature",
      description:
        "Subscribes the voter to the feature. Creates a subscription with reason manual when the voter has none (also after " +
        "an opt-out, which it clears); returns an existing subscription unchanged. 404 not_found for a feature the voter " +
        "cannot see. Banned voters may subscribe.",
      tags: ["Subscriptions"],
      request: { params: featureParams },
      responses: {
        200: jsonContent(envelopeOf(SubscriptionObject), "The voter's subscription"),
        ...writeErrors,
      },
    },
  ),
);

export const unsubscribeFromFeature = createRoute(
  describedRoute(
    { kind: "write" },
    {
      method: "delete",
      path: "/projects/{slug}/features/{id}/subscription",
      operationId: "unsubscribeFromFeature",
      summary: "Unsubscribe from a feature",
      description:
        "Records the voter's opt-out of the feature: later votes and comments do not subscribe them again, only a PUT does. " +
        "Answers the same whether or not the voter was subscribed. 404 not_found for a feature the voter cannot see.",
      tags: ["Subscriptions"],
      request: { params: featureParams },
      responses: {
        200: jsonContent(envelopeOf(SubscriptionDeletedObject), "The voter is not subscribed"),
        ...writeErrors,
      },
    },
  ),
);
