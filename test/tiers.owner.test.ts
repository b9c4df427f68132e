/**
 * Owner tier routes (owner-api-v3.md, /tiers): TierObject with voter_count, create, partial
 * update, price ids unique per project across tiers (docs/decisions.md), deletion clearing the tier
 * from its voters, revenue figures following at once while public scores keep cast weights.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, body, createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";
import { counterProblems, expectStatus, importAccounts } from "./support/owner-accounts.fixture.ts";

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const seed = () => importAccounts(ctx);

const admin = (project: ImportedProject, path: string) => `/api/v3/projects/${project.slug}/admin${path}`;

describe("owner tiers", () => {
  it("lists tiers with their voter counts and price ids", async () => {
    const { project, ids } = await seed();
    const envelope = await expectStatus(await ctx.get(admin(project, "/tiers"), project.secretKey), 200);
    expect(envelope.data).toEqual([
      {
        id: ids.tiers.pro,
        name: "Pro",
        mrr_cents: 4900,
        multiplier: 3,
        stripe_price_ids: ["price_pro_m"],
        paddle_price_ids: [],
        voter_count: 1,
      },
      {
        id: ids.tiers.biz,
        name: "Business",
        mrr_cents: 19900,
        multiplier: 5,
        stripe_price_ids: [],
        paddle_price_ids: ["pri_biz"],
        voter_count: 1,
      },
    ]);
    expect(envelope.meta).toEqual({ page: 1, per_page: 20, total: 2, total_pages: 1, has_more: false });
  });

  it("creates a tier with defaults, and a replayed Idempotency-Key creates nothing new", async () => {
    const { project } = await seed();
    const send = () =>
      ctx.send("POST", admin(project, "/tiers"), project.secretKey, { name: "Team", mrr_cents: 9900 }, { "Idempotency-Key": "tier-1" });
    const created = await expectStatus(await send(), 201);
    expect(created.data).toEqual({
      id: expect.any(Number),
      name: "Team",
      mrr_cents: 9900,
      multiplier: 1,
      stripe_price_ids: [],
      paddle_price_ids: [],
      voter_count: 0,
    });
    const replay = await send();
    expect(replay.status).toBe(201);
    expect(replay.headers.get("Idempotent-Replay")).toBe("true");
    expect((await body(replay)).data.id).toBe(created.data.id);
    const list = await expectStatus(await ctx.get(admin(project, "/tiers"), project.secretKey), 200);
    expect(list.meta.total).toBe(3);
  });

  it("refuses a price id another tier of the project holds (409 already_exists), not one of another project", async () => {
    const { project, ids } = await seed();
    const clash = await expectStatus(
      await ctx.send("POST", admin(project, "/tiers"), project.secretKey, {
        name: "Dup",
        mrr_cents: 1,
        stripe_price_ids: ["price_new", "price_pro_m"],
      }),
      409,
    );
    expect(clash.error).toMatchObject({ code: "already_exists", field: "stripe_price_ids" });
    const patchClash = await expectStatus(
      await ctx.send("PATCH", admin(project, `/tiers/${ids.tiers.pro}`), project.secretKey, { paddle_price_ids: ["pri_biz"] }),
      409,
    );
    expect(patchClash.error).toMatchObject({ code: "already_exists", field: "paddle_price_ids" });
    // A tier may keep its own ids, and the same id in the other system is another price.
    await expectStatus(
      await ctx.send("PATCH", admin(project, `/tiers/${ids.tiers.pro}`), project.secretKey, {
        stripe_price_ids: ["price_pro_m", "price_pro_y"],
        paddle_price_ids: ["price_pro_m"],
      }),
      200,
    );
    const tiers = (await expectStatus(await ctx.get(admin(project, "/tiers"), project.secretKey), 200)).data;
    expect(tiers).toHaveLength(2);
    expect(tiers[0]).toMatchObject({ stripe_price_ids: ["price_pro_m", "price_pro_y"], paddle_price_ids: ["price_pro_m"] });
    // Another project's tier may carry the same price id.
    const other = await seed();
    await expectStatus(
      await ctx.send("POST", admin(other.project, "/tiers"), other.project.secretKey, {
        name: "Same ids",
        mrr_cents: 1,
        stripe_price_ids: ["price_pro_y"],
      }),
      201,
    );
  });

  it("a tier change moves revenue figures at once; the public weighted score keeps cast weights", async () => {
    const { project, ids } = await seed();
    const f1 = () =>
      ctx
        .get(`/api/v3/projects/${project.slug}/revenue/features?sort=votes`, project.secretKey)
        .then((response) => body<Answer<"/api/v3/projects/{slug}/revenue/features", "get">>(response))
        .then((e) => e.data.find((f) => f.id === ids.features.f1));
    expect(await f1()).toMatchObject({ weighted_votes: 9, mrr_cents: 24800 });
    const patched = await expectStatus(
      await ctx.send("PATCH", admin(project, `/tiers/${ids.tiers.pro}`), project.secretKey, {
        multiplier: 10,
        mrr_cents: 100,
        name: "Pro+",
      }),
      200,
    );
    expect(patched.data).toMatchObject({ name: "Pro+", multiplier: 10, mrr_cents: 100, stripe_price_ids: ["price_pro_m"], voter_count: 1 });
    expect(await f1()).toMatchObject({ weighted_votes: 10 + 5 + 1, mrr_cents: 100 + 19900 });
    const stored = await ctx.db.selectFrom("features").select("weighted_score").where("id", "=", ids.features.f1).executeTakeFirstOrThrow();
    expect(stored.weighted_score).toBe(9);
    expect(await counterProblems(ctx.db, project.slug)).toEqual([]);
  });

  it("deleting a tier clears it from its voters; counters and aggregates stay exact", async () => {
    const { project, ids } = await seed();
    const deleted = await expectStatus(await ctx.send("DELETE", admin(project, `/tiers/${ids.tiers.biz}`), project.secretKey), 200);
    expect(deleted.data).toEqual({ deleted: true, id: ids.tiers.biz });
    const bob = (await expectStatus(await ctx.get(admin(project, `/voters/${ids.voters.bob}`), project.secretKey), 200)).data;
    expect(bob).toMatchObject({ tier: null, mrr_cents: 0, mrr_source: "none" });
    expect(await counterProblems(ctx.db, project.slug)).toEqual([]);
    expect((await ctx.send("DELETE", admin(project, `/tiers/${ids.tiers.biz}`), project.secretKey)).status).toBe(404);
    expect((await ctx.send("PATCH", admin(project, `/tiers/${ids.tiers.biz}`), project.secretKey, { name: "x" })).status).toBe(404);
  });

  it("answers 422 naming the field for every bound, and unknown fields; nothing changes", async () => {
    const { project, ids } = await seed();
    // Malformed on purpose: each breaks one bound or names an unknown field.
    const cases: [unknown, string][] = [
      [{ mrr_cents: 1 }, "name"],
      [{ name: "x" }, "mrr_cents"],
      [{ name: " ", mrr_cents: 1 }, "name"],
      [{ name: "x", mrr_cents: -1 }, "mrr_cents"],
      [{ name: "x", mrr_cents: 1.5 }, "mrr_cents"],
      [{ name: "x", mrr_cents: 1, multiplier: 0 }, "multiplier"],
      [{ name: "x", mrr_cents: 1, multiplier: 1001 }, "multiplier"],
      [{ name: "x", mrr_cents: 1, stripe_price_ids: ["a", "a"] }, "stripe_price_ids"],
      [{ name: "x", mrr_cents: 1, paddle_price_ids: [""] }, "paddle_price_ids[0]"],
      [{ name: "x", mrr_cents: 1, voter_count: 3 }, "voter_count"],
    ];
    for (const [input, field] of cases) {
      const envelope = await expectStatus(await ctx.send("POST", admin(project, "/tiers"), project.secretKey, input), 422);
      expect(envelope.error, JSON.stringify(input)).toMatchObject({ code: "validation_failed", field });
    }
    const patch = await expectStatus(
      await ctx.send("PATCH", admin(project, `/tiers/${ids.tiers.pro}`), project.secretKey, { multiplier: null }),
      422,
    );
    expect(patch.error.field).toBe("multiplier");
    expect((await ctx.send("PATCH", admin(project, "/tiers/0"), project.secretKey, { name: "x" })).status).toBe(422);
    const other = await seed();
    const foreign = await ctx.send("PATCH", admin(project, `/tiers/${other.ids.tiers.pro}`), project.secretKey, { name: "stolen" });
    expect(foreign.status).toBe(404);
    const list = (await expectStatus(await ctx.get(admin(other.project, "/tiers"), other.project.secretKey), 200)).data;
    expect(list[0].name).toBe("Pro");
    expect((await expectStatus(await ctx.get(admin(project, "/tiers"), project.secretKey), 200)).meta.total).toBe(2);
  });
});
