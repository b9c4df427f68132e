/**
 * The committed client types (test/generated/api-types.ts, openapi-typescript) type the owner
 * API's boolean filters exactly (owner-api-v3.md, "Routes"). The `expectTypeOf` lines are
 * checked by tsc (`npm run check` typechecks test/): `"true" | "false"` filters fail to compile.
 * The calls then go through openapi-fetch with those types against the app.
 */
import createClient from "openapi-fetch";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import type { paths } from "./generated/api-types.ts";
import { createTestContext, type TestContext } from "./harness.ts";
import { type EventsProject, featureId, importEventsProject, voterId } from "./events.fixture.ts";

type Query<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } } ? NonNullable<Q> : never;

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
