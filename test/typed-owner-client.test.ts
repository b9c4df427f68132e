/**
 * The committed client types (test/generated/api-types.ts, openapi-typescript) type the owner
 * API's boolean filters, the events feed and the webhook payloads exactly (owner-api-v3.md,
 * "Routes", "Events", "Webhooks"). The `expectTypeOf` lines are checked by tsc (`npm run
 * check` typechecks test/): loose types (`"true" | "false"` filters, `data.object` as a record)
 * fail to compile. The calls then go through openapi-fetch with those types against the app,
 * and every event the feed lists must parse with the EventObject schema the document is built
 * from, so the precise types are also true of what the server sends.
 */
import createClient from "openapi-fetch";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { EVENT_TYPES } from "../src/contract/enums.ts";
import { EventObject } from "../src/routes/events/events.owner.schemas.ts";
import type { components, paths, webhooks } from "./generated/api-types.ts";
import { body, createTestContext, type TestContext } from "./support/harness.ts";

/** The parts of the served OpenAPI document the webhook test reads. */
interface WebhooksDocument {
  webhooks: Record<
    string,
    {
      post: {
        requestBody: { content: { "application/json": { schema: { $ref: string } } } };
        parameters: { name: string }[];
      };
    }
  >;
  components: { schemas: Record<string, { properties: { type: { enum: string[] } } }> };
}

import { type EventsProject, featureId, importEventsProject, voterId } from "./support/events.fixture.ts";

type Schemas = components["schemas"];
type Query<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } } ? NonNullable<Q> : never;
type WebhookBody<T extends keyof webhooks> = webhooks[T] extends { post: { requestBody: { content: { "application/json": infer B } } } }
  ? B
  : never;

let ctx: TestContext;
let project: EventsProject;
let client: ReturnType<typeof createClient<paths>>;
beforeAll(async () => {
  ctx = await createTestContext();
  project = await importEventsProject(ctx);
  client = createClient<paths>({
    baseUrl: "http://board.test",
    headers: { "X-API-Key": project.secretKey },
    fetch: async (request: Request) => ctx.app.fetch(request),
  });
});
afterAll(() => ctx.close());

describe("owner list filters", () => {
  it("are booleans in the types, sent as true/false and applied; other strings answer 422 naming the filter", async () => {
    expectTypeOf<Query<"/api/v3/projects/{slug}/admin/voters">["banned"]>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<Query<"/api/v3/projects/{slug}/admin/voters">["churned"]>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<Query<"/api/v3/projects/{slug}/admin/features">["approved"]>().toEqualTypeOf<boolean | undefined>();

    const slug = project.slug;
    const ban = await client.PATCH("/api/v3/projects/{slug}/admin/voters/{voter_id}", {
      params: { path: { slug, voter_id: voterId(project, "cy") } },
      body: { banned: true },
    });
    expect(ban.response.status).toBe(200);
    const banned = await client.GET("/api/v3/projects/{slug}/admin/voters", { params: { path: { slug }, query: { banned: true } } });
    expect(banned.data?.data.map((voter) => voter.voter_id)).toEqual([voterId(project, "cy")]);
    const notBanned = await client.GET("/api/v3/projects/{slug}/admin/voters", {
      params: { path: { slug }, query: { banned: false, per_page: 100 } },
    });
    expect(notBanned.data?.meta.total).toBe(32);
    const pending = await client.GET("/api/v3/projects/{slug}/admin/features", { params: { path: { slug }, query: { approved: false } } });
    expect(pending.data?.data.map((feature) => feature.id)).toEqual([featureId(project, "pending")]);

    for (const [path, field] of [
      ["/voters?banned=yes", "banned"],
      ["/voters?churned=1", "churned"],
      ["/features?approved=TRUE", "approved"],
    ]) {
      const response = await ctx.get(`/api/v3/projects/${slug}/admin${path}`, project.secretKey);
      expect(response.status, path).toBe(422);
      expect((await response.json()).error).toMatchObject({ code: "validation_failed", field });
    }
  });
});

describe("EventObject", () => {
  it("narrows data.object by type in the feed's types, and every listed event fits its type's schema", async () => {
    type Event = NonNullable<
      paths["/api/v3/projects/{slug}/admin/events"]["get"]["responses"][200]["content"]["application/json"]
    >["data"][number];
    expectTypeOf<Event>().toEqualTypeOf<Schemas["EventObject"]>();
    expectTypeOf<Extract<Event, { type: "vote.created" }>["data"]["object"]>().toEqualTypeOf<Schemas["VoteEventObject"]>();
    expectTypeOf<Schemas["VoteEventObject"]["vote_count"]>().toEqualTypeOf<number>();
    expectTypeOf<Extract<Event, { type: "feature.updated" }>["data"]["object"]>().toEqualTypeOf<Schemas["AdminFeatureObject"]>();
    expectTypeOf<Extract<Event, { type: "release.published" }>["data"]["object"]>().toEqualTypeOf<Schemas["AdminReleaseObject"]>();
    expectTypeOf<Extract<Event, { type: "voter.banned" }>["data"]["object"]>().toEqualTypeOf<Schemas["AdminVoterObject"]>();
    expectTypeOf<Extract<Event, { type: "comment.created" }>["data"]["object"]["feature_id"]>().toEqualTypeOf<number>();
    expectTypeOf<Event["data"]["changes"]>().toEqualTypeOf<{ [field: string]: { from: unknown; to: unknown } } | null>();
    expectTypeOf<Event["type"]>().toEqualTypeOf<(typeof EVENT_TYPES)[number]>();

    const slug = project.slug;
    const feature = featureId(project, "plain");
    const vote = await client.POST("/api/v3/projects/{slug}/features/{id}/vote", {
      params: { path: { slug, id: feature }, header: { "X-VF-Anon": project.tokens.ada! } },
    });
    expect(vote.response.status).toBe(200);
    const patched = await client.PATCH("/api/v3/projects/{slug}/admin/features/{id}", {
      params: { path: { slug, id: feature } },
      body: { heading: "Plain, renamed" },
    });
    expect(patched.response.status).toBe(200);

    const deadline = Date.now() + 10_000;
    let events: Event[] = [];
    while (events.length < 2 && Date.now() < deadline) {
      const page = await client.GET("/api/v3/projects/{slug}/admin/events", { params: { path: { slug }, query: { per_page: 100 } } });
      expect(page.response.status).toBe(200);
      events = page.data!.data;
    }
    let voteCount: number | undefined;
    let renamed: { from: unknown; to: unknown } | undefined;
    for (const event of events) {
      expect(EventObject.safeParse(event).error, JSON.stringify(event)).toBeUndefined();
      // Narrowing on type alone gives the object's fields: no cast.
      if (event.type === "vote.created") voteCount = event.data.object.vote_count;
      if (event.type === "feature.updated") {
        expect(event.data.object.heading).toBe("Plain, renamed");
        renamed = event.data.changes?.heading;
      }
    }
    expect(voteCount).toBe(1);
    expect(renamed).toEqual({ from: "Plain", to: "Plain, renamed" });
  });
});

describe("webhooks", () => {
  it("has one typed POST body per event type and for ping, with the Standard Webhooks headers", async () => {
    expectTypeOf<keyof webhooks>().toEqualTypeOf<(typeof EVENT_TYPES)[number] | "ping">();
    expectTypeOf<WebhookBody<"vote.created">>().toEqualTypeOf<Schemas["VoteCreatedEvent"]>();
    expectTypeOf<WebhookBody<"vote.created">["data"]["object"]["vote_count"]>().toEqualTypeOf<number>();
    expectTypeOf<WebhookBody<"vote.created">["type"]>().toEqualTypeOf<"vote.created">();
    expectTypeOf<WebhookBody<"feature.deleted">["data"]["object"]>().toEqualTypeOf<Schemas["AdminFeatureObject"]>();
    expectTypeOf<WebhookBody<"ping">["data"]["object"]>().toEqualTypeOf<Schemas["WebhookObject"]>();
    expectTypeOf<webhooks["ping"]["post"]["parameters"]["header"]>().toEqualTypeOf<{
      "webhook-id": string;
      "webhook-timestamp": number;
      "webhook-signature": string;
    }>();

    const document = await body<WebhooksDocument>(await ctx.app.request("/api/v3/openapi.json"));
    expect(Object.keys(document.webhooks).sort()).toEqual([...EVENT_TYPES, "ping"].sort());
    for (const [type, item] of Object.entries(document.webhooks)) {
      const schema = item.post.requestBody.content["application/json"].schema;
      expect(document.components.schemas[schema.$ref.split("/").at(-1)!]!.properties.type.enum, type).toEqual([type]);
      expect(item.post.parameters.map((parameter) => parameter.name).sort()).toEqual([
        "webhook-id",
        "webhook-signature",
        "webhook-timestamp",
      ]);
    }
  });
});
