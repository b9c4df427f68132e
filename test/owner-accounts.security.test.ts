/**
 * Owner accounts routes' security (owner-api-v3.md, "Common rules", Rules 6-8; the secret-key-only
 * matrix of every owner route is test/owner-routes.security.test.ts): identity headers ignored;
 * bad input 422 naming the field and changing nothing; secrets and keys never in an answer
 * (but the regeneration's 201) nor in the logs.
 */
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.ts";
import { body, createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";
import { accountsSnapshot, SSO_SECRET } from "./support/owner-accounts.fixture.ts";

let ctx: TestContext;
let project: ImportedProject;
let other: ImportedProject;
let tokens: ReturnType<typeof accountsSnapshot>["tokens"];

beforeAll(async () => {
  ctx = await createTestContext();
  const seeded = accountsSnapshot();
  tokens = seeded.tokens;
  project = await ctx.importProject(seeded.overrides);
  other = await ctx.importProject(accountsSnapshot().overrides);
});
afterAll(() => ctx.close());

const ids = () => project.ids.ids;
const admin = (path: string, slug = project.slug) => `/api/v3/projects/${slug}/admin${path}`;

describe("owner accounts routes: access", () => {
  it("ignore identity headers, even invalid ones", async () => {
    const response = await ctx.get(admin("/voters"), project.secretKey, { "X-VF-Anon": "not-a-token", "X-VF-Token": "garbage" });
    expect(response.status).toBe(200);
    const withBanned = await ctx.send(
      "PATCH",
      admin(`/voters/${ids().voters.dee}`),
      project.secretKey,
      { company: "Dee Co" },
      { "X-VF-Anon": tokens.cyd },
    );
    expect(withBanned.status).toBe(200);
  });

  it("ids of another project answer 404 and change nothing", async () => {
    const foreignVoter = other.ids.ids.voters.ada;
    expect((await ctx.send("PATCH", admin(`/voters/${foreignVoter}`), project.secretKey, { banned: true })).status).toBe(404);
    expect((await ctx.send("DELETE", admin(`/voters/${foreignVoter}`), project.secretKey)).status).toBe(404);
    expect((await ctx.send("DELETE", admin(`/tiers/${other.ids.ids.tiers.pro}`), project.secretKey)).status).toBe(404);
    const patchedTier = await ctx.send("PATCH", admin(`/voters/${ids().voters.dee}`), project.secretKey, {
      tier_id: other.ids.ids.tiers.pro,
    });
    expect(patchedTier.status).toBe(422);
    expect((await body(patchedTier)).error).toMatchObject({ code: "validation_failed", field: "tier_id" });
    const theirs = await body(await ctx.get(admin(`/voters/${foreignVoter}`, other.slug), other.secretKey));
    expect(theirs.data).toMatchObject({ banned: false, display_name: "Ada" });
    expect((await body(await ctx.get(admin(`/voters/${ids().voters.dee}`), project.secretKey))).data.tier).toBeNull();
  });

  it("voter PATCH: 422 naming the field for every bound and unknown keys; nothing changes", async () => {
    // Malformed on purpose: each breaks one bound or names an unknown field.
    const cases: [unknown, string][] = [
      [{ display_name: "" }, "display_name"],
      [{ display_name: null }, "display_name"],
      [{ email: "not an email" }, "email"],
      [{ role: "admin" }, "role"],
      [{ banned: "yes" }, "banned"],
      [{ tier_id: 0 }, "tier_id"],
      [{ tier_id: "1" }, "tier_id"],
      [{ mrr_override_cents: -1 }, "mrr_override_cents"],
      [{ mrr_override_cents: 2147483648 }, "mrr_override_cents"],
      [{ stripe_customer_id: "" }, "stripe_customer_id"],
      [{ churned: null }, "churned"],
      [{ vote_count: 0 }, "vote_count"],
      [{ churned_at: "2026-01-01T00:00:00Z" }, "churned_at"],
      [{ voter_id: "v_mine" }, "voter_id"],
    ];
    for (const [input, field] of cases) {
      const response = await ctx.send("PATCH", admin(`/voters/${ids().voters.bob}`), project.secretKey, input);
      expect(response.status, JSON.stringify(input)).toBe(422);
      expect((await body(response)).error, JSON.stringify(input)).toMatchObject({ code: "validation_failed", field });
    }
    const bob = (await body(await ctx.get(admin(`/voters/${ids().voters.bob}`), project.secretKey))).data;
    expect(bob).toMatchObject({ display_name: "Bob", email: null, role: "editor", banned: false, vote_count: 2, churned: false });
    const query = await ctx.get(admin("/voters?banned=yes"), project.secretKey);
    expect((await body(query)).error).toMatchObject({ code: "validation_failed", field: "banned" });
    const tier = await ctx.get(admin("/voters?tier_id=1e1"), project.secretKey);
    expect((await body(tier)).error).toMatchObject({ code: "validation_failed", field: "tier_id" });
  });
});

describe("owner accounts routes: secrets", () => {
  it("never send or log a secret, a webhook secret or a key (but the regeneration's 201 answer)", async () => {
    const seeded = accountsSnapshot();
    const target = await ctx.importProject(seeded.overrides);
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const app = createApp({ ...ctx.deps, logger: pino({ level: "trace" }, sink) });
    const send = (method: string, path: string, key: string, input?: unknown) =>
      app.request(admin(path, target.slug), {
        method,
        headers: { "X-API-Key": key, ...(input === undefined ? {} : { "Content-Type": "application/json" }) },
        body: input === undefined ? undefined : JSON.stringify(input),
      });
    const answers: string[] = [];
    const newSso = "rotated-sso-secret-never-logged-0123456789";
    answers.push(
      await (
        await send("PATCH", "/settings", target.secretKey, {
          sso_secret: newSso,
          stripe_webhook_secret: "whsec_never_logged",
          paddle_webhook_secret: "pdl_never_logged",
        })
      ).text(),
    );
    answers.push(await (await send("GET", "/settings", target.secretKey)).text());
    answers.push(await (await send("GET", "/keys", target.secretKey)).text());
    const regenerated = await send("POST", "/keys/regenerate", target.secretKey, { kind: "secret" });
    const fresh = (await regenerated.json()).data.key as string;
    expect(fresh).toMatch(/^fb_sk_/);
    answers.push(await (await send("GET", "/keys", fresh)).text());
    answers.push(await (await send("GET", "/voters", fresh)).text());
    const secrets = [SSO_SECRET, newSso, "whsec_never_logged", "pdl_never_logged", target.secretKey, target.embedKey, fresh];
    expect(lines.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      for (const answer of answers) expect(answer).not.toContain(secret);
      for (const line of lines) expect(line).not.toContain(secret);
    }
  });
});
