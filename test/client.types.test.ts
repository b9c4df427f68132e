/**
 * The TypeScript client is typed end to end (docs/contract/clients-v3.md, "The TypeScript client"):
 * the `@ts-expect-error` lines below are checked by the root `npx tsc --noEmit` (tsconfig.json
 * includes test/), so a wrong call the types accept, or a line that no longer errs, fails the
 * check. At run time the narrowing functions are applied to sample values.
 */
import { describe, expect, it } from "vitest";
import type { createClient, NotificationObject, WebhookEvent } from "../clients/typescript/src/index.ts";

/** Calls never made: only their types matter. */
function wrongCallsAreRefused(client: ReturnType<typeof createClient>) {
  // @ts-expect-error the path needs slug and id
  void client.castVote({ path: { slug: "lumen" } });
  // @ts-expect-error id is a number
  void client.getFeature({ path: { slug: "lumen", id: "7" } });
  // @ts-expect-error sort is a closed set
  void client.listFeatures({ path: { slug: "lumen" }, query: { sort: "loudest" } });
  // @ts-expect-error unread is a boolean, not a string
  void client.listNotifications({ path: { slug: "lumen" }, query: { unread: "true" } });
  // @ts-expect-error a read takes no body
  void client.getProjectBoard({ path: { slug: "lumen" }, body: {} });
  // @ts-expect-error reads take no Idempotency-Key
  void client.listFeatures({ path: { slug: "lumen" }, idempotencyKey: "k" });
  // @ts-expect-error createComment's body needs content
  void client.createComment({ path: { slug: "lumen", id: 1 }, body: {} });
  // @ts-expect-error no such operation
  void client.listWidgets();
  void client.castVote({ path: { slug: "lumen", id: 1 }, idempotencyKey: "vote-1" });
}

/** Data of the answers is the document's, not unknown. */
async function answersAreTyped(client: ReturnType<typeof createClient>) {
  const page = await client.listFeatures({ path: { slug: "lumen" } });
  const count: number | null = page.data[0]!.vote_count;
  const more: boolean = page.meta.has_more;
  // @ts-expect-error a single resource's meta is null
  const none: number = (await client.getFeature({ path: { slug: "lumen", id: 1 } })).meta.page;
  // @ts-expect-error heading is a string
  const heading: number = page.data[0]!.heading;
  return { count, more, none, heading };
}

/** A notification's data narrows by its type. */
function describeNotification(notification: NotificationObject): string {
  switch (notification.type) {
    case "status_changed":
      return `${notification.data.from} -> ${notification.data.to}`;
    case "shipped":
      return `shipped in ${notification.data.release.name}`;
    case "merged":
      return `merged into ${notification.data.into.heading}`;
    case "replied":
      // @ts-expect-error a reply's data has no release
      void notification.data.release;
      return `${notification.data.author_name ?? "someone"} replied to ${notification.data.parent_id}`;
    case "responded":
      return notification.data.response_is_denial ? "denied" : notification.data.developer_response;
    case "team_commented":
      return notification.data.excerpt;
  }
}

/** An event's data.object narrows by its type. */
function describeEvent(event: WebhookEvent): string {
  if (event.type === "vote.created") return `feature ${event.data.object.feature_id} has ${event.data.object.vote_count} votes`;
  if (event.type === "ping") return `ping of webhook ${event.data.object.url}`;
  // @ts-expect-error only vote events carry feature_id on their object
  void event.data.object.feature_id;
  return event.type;
}

describe("client types", () => {
  it("holds the compile-time checks (run by tsc, not here)", () => {
    expect([wrongCallsAreRefused, answersAreTyped].every((check) => typeof check === "function")).toBe(true);
  });

  it("narrows notifications and events by type", () => {
    const base = { id: "ntf_1", feature: { id: 1, heading: "Dark mode" }, read: false, created_at: "2026-11-20T09:30:00.000Z" };
    expect(describeNotification({ ...base, type: "status_changed", data: { from: "planned", to: "done" } })).toBe("planned -> done");
    expect(describeNotification({ ...base, type: "shipped", data: { release: { id: 2, name: "1.4" } } })).toBe("shipped in 1.4");
    const vote = {
      id: "evt_1",
      type: "vote.created" as const,
      created_at: "2026-11-23T12:00:00.000Z",
      project: "lumen",
      data: { object: { feature_id: 4, voter_id: "v_1", vote_count: 9 }, changes: null },
    };
    expect(describeEvent(vote)).toBe("feature 4 has 9 votes");
  });
});
