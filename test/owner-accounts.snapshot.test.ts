/**
 * The snapshot fields the owner accounts routes rely on (project-snapshot.md, "Document"):
 * tiers' stripe_price_ids / paddle_price_ids and the project's billing webhook secrets are
 * imported and exported as they are; a key imported in plaintext keeps its 4-character hint.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportSnapshot, portableSnapshot } from "../src/admin/snapshot-export.ts";
import { createTestContext, type TestContext } from "./support/harness.ts";
import { expectStatus, importAccounts } from "./support/owner-accounts.fixture.ts";

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

describe("snapshot fields of the owner accounts", () => {
  it("round-trips tier price ids and billing webhook secrets; imported keys get their hint", async () => {
    const { project } = await importAccounts(ctx);
    await expectStatus(
      await ctx.send("PATCH", `/api/v3/projects/${project.slug}/admin/settings`, project.secretKey, {
        stripe_webhook_secret: "whsec_roundtrip",
        paddle_webhook_secret: "pdl_roundtrip",
      }),
      200,
    );
    const exported = await exportSnapshot(ctx.db, project.slug);
    expect(exported.project).toMatchObject({ stripe_webhook_secret: "whsec_roundtrip", paddle_webhook_secret: "pdl_roundtrip" });
    expect(exported.tiers.map((t) => [t.name, t.stripe_price_ids, t.paddle_price_ids])).toEqual([
      ["Pro", ["price_pro_m"], []],
      ["Business", [], ["pri_biz"]],
    ]);
    // Export writes no keys: the copy takes the harness's fresh ones.
    // A copy beside its original: without the restore fields (ids, digests) that name the original.
    const { keys: _none, ...withoutKeys } = portableSnapshot(exported);
    const copy = await ctx.importProject({ ...withoutKeys, project: { ...exported.project, slug: `${project.slug}-copy` } });
    const settings = await expectStatus(await ctx.get(`/api/v3/projects/${copy.slug}/admin/settings`, copy.secretKey), 200);
    expect(settings.data).toMatchObject({ stripe_webhook_secret_set: true, paddle_webhook_secret_set: true });
    const tiers = await expectStatus(await ctx.get(`/api/v3/projects/${copy.slug}/admin/tiers`, copy.secretKey), 200);
    expect(tiers.data.map((t: { stripe_price_ids: string[] }) => t.stripe_price_ids)).toEqual([["price_pro_m"], []]);
    const keys = await expectStatus(await ctx.get(`/api/v3/projects/${copy.slug}/admin/keys`, copy.secretKey), 200);
    expect(keys.data.map((k: { hint: string }) => k.hint)).toEqual([copy.secretKey.slice(-4), copy.embedKey.slice(-4)]);
  });
});
