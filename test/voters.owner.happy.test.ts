/**
 * Owner voter routes (owner-api-v3.md, GET/PATCH/DELETE /voters, Rules 3 and 6): the
 * AdminVoterObject, filters, partial updates with their effect on the public and revenue routes,
 * and erasure with every counter exact and no idempotency record of the voter left.
 */
import { createHash, randomBytes } from "node:crypto";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Answer,
  body,
  createTestContext,
  type ErrorAnswer,
  type ImportedProject,
  type OwnerErrorAnswer,
  type TestContext,
} from "./support/harness.ts";
import { counterProblems, expectStatus, importAccounts, SSO_SECRET } from "./support/owner-accounts.fixture.ts";

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const seed = () => importAccounts(ctx);

const admin = (project: ImportedProject, path: string) => `/api/v3/projects/${project.slug}/admin${path}`;
const pub = (project: ImportedProject, path: string) => `/api/v3/projects/${project.slug}${path}`;

type AdminVoters = Answer<"/api/v3/projects/{slug}/admin/voters", "get">;
type AdminVoter = Answer<"/api/v3/projects/{slug}/admin/voters/{voter_id}", "get">;
type PatchedVoter = Answer<"/api/v3/projects/{slug}/admin/voters/{voter_id}", "patch">;
type DeletedVoter = Answer<"/api/v3/projects/{slug}/admin/voters/{voter_id}", "delete">;
type RevenueFeatures = Answer<"/api/v3/projects/{slug}/revenue/features", "get">;
type PublicFeature = Answer<"/api/v3/projects/{slug}/features/{id}", "get">;
type Comments = Answer<"/api/v3/projects/{slug}/features/{id}/comments", "get">;
type BoardDocument = Answer<"/api/v3/projects/{slug}", "get">;
type Identity = Answer<"/api/v3/projects/{slug}/identity", "post", 201>;

/** The body of an answer asserted to have `status`, as the answer `T` the OpenAPI document gives. */
const ok = <T = unknown>(response: Response, status = 200): Promise<T> => expectStatus(response, status);

function ssoToken(sub: string, secret = SSO_SECRET): Promise<string> {
  return new SignJWT({ name: "Bob Again" })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(new TextEncoder().encode(secret));
}

describe("GET /admin/voters", () => {
  it("lists every voter in creation order as AdminVoterObject", async () => {
    const { project, ids } = await seed();
    const envelope = await ok<AdminVoters>(await ctx.get(admin(project, "/voters"), project.secretKey));
    expect(envelope.meta).toEqual({ page: 1, per_page: 20, total: 4, total_pages: 1, has_more: false });
    expect(envelope.data.map((v) => v.display_name)).toEqual(["Ada", "Bob", "Cyd", "Dee"]);
    expect(envelope.data[0]).toEqual({
      voter_id: ids.voters.ada,
      display_name: "Ada",
      company: "Ada Co",
      customer_id: "cus_ada",
      matched_on: "stripe",
      subscription_id: null,
      subscription_status: null,
      subscribed_at: null,
      trial_ends_at: null,
      canceled_at: null,
      churned: false,
      churned_at: null,
      churn_source: null,
      last_synced_at: null,
      mrr_cents: 4900,
      mrr_source: "tier",
      currency_symbol: "€",
      tier: { id: ids.tiers.pro, name: "Pro", mrr_cents: 4900, multiplier: 3 },
      vote_count: 2,
      kind: "anonymous",
      email: "ada@example.com",
      sso_id: null,
      role: null,
      banned: false,
      email_unsubscribed: false,
      mrr_override_cents: null,
      stripe_customer_id: "cus_ada",
      paddle_customer_id: null,
      created_at: "2026-10-01T00:00:00.000Z",
    });
    expect(envelope.data[1]).toMatchObject({
      kind: "sso",
      sso_id: "bob-sub",
      role: "editor",
      paddle_customer_id: "ctm_bob",
      customer_id: "ctm_bob",
      matched_on: "paddle",
    });
    expect(envelope.data[0]).not.toHaveProperty("votes");
  });

  it("filters by q (name, email, company, customer ids), banned, tier_id, churned and pages", async () => {
    const { project, ids } = await seed();
    const names = async (query: string) =>
      (await ok<AdminVoters>(await ctx.get(admin(project, `/voters${query}`), project.secretKey))).data.map((v) => v.display_name);
    expect(await names("?q=ADA%20c")).toEqual(["Ada"]);
    expect(await names("?q=example.com")).toEqual(["Ada"]);
    expect(await names("?q=ctm_b")).toEqual(["Bob"]);
    expect(await names("?q=cus_")).toEqual(["Ada"]);
    expect(await names("?q=%25")).toEqual([]);
    expect(await names("?q=%20")).toEqual(["Ada", "Bob", "Cyd", "Dee"]);
    expect(await names("?banned=true")).toEqual(["Cyd"]);
    expect(await names("?banned=false")).toEqual(["Ada", "Bob", "Dee"]);
    expect(await names(`?tier_id=${ids.tiers.biz}`)).toEqual(["Bob"]);
    expect(await names("?tier_id=2147483647")).toEqual([]);
    expect(await names("?churned=true")).toEqual(["Dee"]);
    const second = await ok<AdminVoters>(await ctx.get(admin(project, "/voters?per_page=3&page=2"), project.secretKey));
    expect(second.data.map((v) => v.display_name)).toEqual(["Dee"]);
    expect(second.meta).toEqual({ page: 2, per_page: 3, total: 4, total_pages: 2, has_more: false });
  });

  it("reads one voter, answers 304 to its ETag, and 404 for another project's voter", async () => {
    const { project, ids } = await seed();
    const other = await seed();
    const response = await ctx.get(admin(project, `/voters/${ids.voters.bob}`), project.secretKey);
    const envelope = await ok<AdminVoter>(response);
    expect(envelope.data.voter_id).toBe(ids.voters.bob);
    expect(response.headers.get("Cache-Control")).toBe("private, max-age=0");
    const etag = response.headers.get("ETag")!;
    expect((await ctx.get(admin(project, `/voters/${ids.voters.bob}`), project.secretKey, { "If-None-Match": etag })).status).toBe(304);
    const foreign = await ctx.get(admin(project, `/voters/${other.ids.voters.bob}`), project.secretKey);
    expect(foreign.status).toBe(404);
    expect((await body<OwnerErrorAnswer>(foreign)).error.code).toBe("not_found");
  });
});

describe("PATCH /admin/voters/{voter_id}", () => {
  it("changes the sent fields only, and null clears", async () => {
    const { project, ids } = await seed();
    const envelope = await ok<PatchedVoter>(
      await ctx.send("PATCH", admin(project, `/voters/${ids.voters.ada}`), project.secretKey, {
        display_name: "Ada L.",
        email: null,
        role: "viewer",
        company: "Engines",
        stripe_customer_id: null,
        paddle_customer_id: "ctm_ada",
      }),
    );
    expect(envelope.data).toMatchObject({
      display_name: "Ada L.",
      email: null,
      role: "viewer",
      company: "Engines",
      stripe_customer_id: null,
      paddle_customer_id: "ctm_ada",
      customer_id: "ctm_ada",
      matched_on: "paddle",
      tier: { name: "Pro" },
      banned: false,
    });
    const again = await ok<AdminVoter>(await ctx.get(admin(project, `/voters/${ids.voters.ada}`), project.secretKey));
    expect(again.data).toEqual(envelope.data);
  });

  it("churned: true records manual churn now; false clears the three fields", async () => {
    const { project, ids } = await seed();
    const before = Date.now();
    const churned = await ok<PatchedVoter>(
      await ctx.send("PATCH", admin(project, `/voters/${ids.voters.ada}`), project.secretKey, { churned: true }),
    );
    expect(churned.data).toMatchObject({ churned: true, churn_source: "manual" });
    expect(Date.parse(churned.data.churned_at!)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(churned.data.churned_at!)).toBeLessThanOrEqual(Date.now() + 1000);
    // Dee churned by Stripe: true again keeps the recorded churn.
    const dee = await ok<PatchedVoter>(
      await ctx.send("PATCH", admin(project, `/voters/${ids.voters.dee}`), project.secretKey, { churned: true }),
    );
    expect(dee.data).toMatchObject({ churned: true, churn_source: "stripe", churned_at: "2026-09-01T00:00:00.000Z" });
    const cleared = await ok<PatchedVoter>(
      await ctx.send("PATCH", admin(project, `/voters/${ids.voters.dee}`), project.secretKey, { churned: false }),
    );
    expect(cleared.data).toMatchObject({ churned: false, churned_at: null, churn_source: null });
    expect(await counterProblems(ctx.db, project.slug)).toEqual([]);
  });

  it("tier_id and mrr_override_cents change revenue figures at once; votes keep their public weight", async () => {
    const { project, ids } = await seed();
    const revenue = async () => {
      const data = (await ok<RevenueFeatures>(await ctx.get(pub(project, "/revenue/features?sort=votes&per_page=100"), project.secretKey)))
        .data;
      return new Map(data.map((f) => [f.id, f]));
    };
    const f1 = ids.features.f1;
    expect((await revenue()).get(f1)).toMatchObject({ weighted_votes: 3 + 5 + 1, mrr_cents: 4900 + 19900 });
    // Ada moves from Pro (x3) to Business (x5) with an override; Bob loses his tier.
    const ada = await ok<PatchedVoter>(
      await ctx.send("PATCH", admin(project, `/voters/${ids.voters.ada}`), project.secretKey, {
        tier_id: ids.tiers.biz,
        mrr_override_cents: 30000,
      }),
    );
    expect(ada.data).toMatchObject({ tier: { id: ids.tiers.biz }, mrr_cents: 30000, mrr_source: "override", mrr_override_cents: 30000 });
    await ok<PatchedVoter>(await ctx.send("PATCH", admin(project, `/voters/${ids.voters.bob}`), project.secretKey, { tier_id: null }));
    expect((await revenue()).get(f1)).toMatchObject({ weighted_votes: 5 + 1 + 1, mrr_cents: 30000, paying_voters: 1 });
    const feature = (await ok<AdminVoter>(await ctx.get(admin(project, `/voters/${ids.voters.ada}`), project.secretKey))).data;
    expect(feature.vote_count).toBe(2);
    // The public score keeps the weights the votes were cast with (3 + 5 + 1).
    const row = await ctx.db.selectFrom("features").select("weighted_score").where("id", "=", f1).executeTakeFirstOrThrow();
    expect(row.weighted_score).toBe(9);
    expect(await counterProblems(ctx.db, project.slug)).toEqual([]);
  });

  it("a ban holds on the voter's next write; unbanning lifts it", async () => {
    const { project, ids, tokens } = await seed();
    const comment = () =>
      ctx.send(
        "POST",
        pub(project, `/features/${ids.features.f1}/comments`),
        project.secretKey,
        { content: "hi" },
        { "X-VF-Anon": tokens.ada },
      );
    expect((await comment()).status).toBe(201);
    await ok<PatchedVoter>(await ctx.send("PATCH", admin(project, `/voters/${ids.voters.ada}`), project.secretKey, { banned: true }));
    const refused = await comment();
    expect(refused.status).toBe(403);
    expect((await body<ErrorAnswer>(refused)).error.code).toBe("voter_banned");
    await ok<PatchedVoter>(await ctx.send("PATCH", admin(project, `/voters/${ids.voters.ada}`), project.secretKey, { banned: false }));
    expect((await comment()).status).toBe(201);
  });
});

describe("DELETE /admin/voters/{voter_id} (erasure)", () => {
  it("removes the voter's votes, likes, dismissals and comments with their replies; every counter exact", async () => {
    const { project, ids, tokens } = await seed();
    const featureBefore = (await ok<PublicFeature>(await ctx.get(pub(project, `/features/${ids.features.f1}`), project.secretKey))).data;
    expect(featureBefore).toMatchObject({ vote_count: 3, comment_count: 3 });
    const erased = await ok<DeletedVoter>(await ctx.send("DELETE", admin(project, `/voters/${ids.voters.ada}`), project.secretKey));
    expect(erased.data).toEqual({ deleted: true, voter_id: ids.voters.ada });

    expect(await counterProblems(ctx.db, project.slug)).toEqual([]);
    const f1 = (await ok<PublicFeature>(await ctx.get(pub(project, `/features/${ids.features.f1}`), project.secretKey))).data;
    // f1 loses Ada's vote and her comment c1 with both replies.
    expect(f1).toMatchObject({ vote_count: 2, comment_count: 0 });
    const f2 = (await ok<PublicFeature>(await ctx.get(pub(project, `/features/${ids.features.f2}`), project.secretKey))).data;
    // f2 loses Ada's vote and her reply r3; Bob's c2 stays with Cyd's like only.
    expect(f2).toMatchObject({ vote_count: 1, comment_count: 1 });
    const comments = (await ok<Comments>(await ctx.get(pub(project, `/features/${ids.features.f2}/comments`), project.secretKey))).data;
    expect(comments.map((c) => [c.id, c.like_count])).toEqual([[ids.comments.c2, 1]]);
    expect(
      await ctx.db.selectFrom("message_dismissals").select("voter_id").where("message_id", "=", ids.messages.m1).execute(),
    ).toHaveLength(1);
    // Bob, Cyd and Dee still have votes: project.voter_count is 3.
    const board = (await ok<BoardDocument>(await ctx.get(pub(project, ""), project.secretKey))).data;
    expect(board.project.voter_count).toBe(3);

    expect((await ctx.get(admin(project, `/voters/${ids.voters.ada}`), project.secretKey)).status).toBe(404);
    const anon = await ctx.get(pub(project, "/features"), project.secretKey, { "X-VF-Anon": tokens.ada });
    expect(anon.status).toBe(401);
    expect((await body<ErrorAnswer>(anon)).error.code).toBe("identity_invalid");
    expect((await ctx.send("DELETE", admin(project, `/voters/${ids.voters.ada}`), project.secretKey)).status).toBe(404);
  });

  it("deletes the voter's idempotency records on the shared store, /identity's too; another voter's stay", async () => {
    const { project, ids, tokens } = await seed();
    const projectId = (await ctx.db.selectFrom("projects").select("id").where("slug", "=", project.slug).executeTakeFirstOrThrow()).id;
    const content = `Ada's keyed comment ${randomBytes(4).toString("hex")}`;
    const commentAs = (token: string) =>
      ctx.send(
        "POST",
        pub(project, `/features/${ids.features.f2}/comments`),
        project.secretKey,
        { content },
        {
          "X-VF-Anon": token,
          "Idempotency-Key": "erase-comment",
        },
      );
    const identityOfAda = () =>
      ctx.send("POST", pub(project, "/identity"), project.secretKey, undefined, {
        "X-VF-Anon": tokens.ada,
        "Idempotency-Key": "erase-identity",
      });
    await ok(await commentAs(tokens.ada), 201);
    await ok(await commentAs(tokens.dee), 201);
    expect((await ok<Identity>(await identityOfAda())).data.display_name).toBe("Ada");
    // Recorded: the same request again is a replay.
    const replayed = await commentAs(tokens.ada);
    expect(replayed.headers.get("Idempotent-Replay")).toBe("true");
    expect(await replayed.text()).toContain(content);

    await ok<DeletedVoter>(await ctx.send("DELETE", admin(project, `/voters/${ids.voters.ada}`), project.secretKey));

    // The record keys of src/middleware/idempotency.ts: project, scope, key digest.
    const digest = (text: string) => createHash("sha256").update(text).digest("hex");
    const key = (scope: string, idempotencyKey: string) => `${projectId}:${scope}:${digest(idempotencyKey)}`;
    const store = ctx.deps.idempotencyStore;
    for (const gone of [key(ids.voters.ada, "erase-comment"), key(`token:${digest(tokens.ada)}`, "erase-identity")]) {
      const claim = await store.claim(gone, "probe", 15);
      expect(claim.claimed, gone).toBe(true);
      if (claim.claimed) await store.release(gone, claim.token);
    }
    const kept = await store.claim(key(ids.voters.dee, "erase-comment"), "probe", 15);
    expect(kept).toMatchObject({ claimed: false, record: { state: "done", response: { status: 201 } } });
    // Ada's /identity request is not answered from a record any more.
    const again = await identityOfAda();
    expect(again.headers.get("Idempotent-Replay")).toBeNull();
    expect(await again.text()).not.toContain('"Ada"');
  });

  it("an SSO voter's sub mints a new voter with no history", async () => {
    const { project, ids } = await seed();
    await ok<DeletedVoter>(await ctx.send("DELETE", admin(project, `/voters/${ids.voters.bob}`), project.secretKey));
    expect(await counterProblems(ctx.db, project.slug)).toEqual([]);
    const token = await ssoToken("bob-sub");
    const identity = await ok<Identity>(
      await ctx.send("POST", pub(project, "/identity"), project.secretKey, undefined, { "X-VF-Token": token }),
      201,
    );
    expect(identity.data.voter_id).not.toBe(ids.voters.bob);
    expect(identity.data.voted_feature_ids).toEqual([]);
    const list = (await ok<AdminVoters>(await ctx.get(admin(project, "/voters?q=bob"), project.secretKey))).data;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ sso_id: "bob-sub", vote_count: 0, tier: null, role: null });
  });
});
