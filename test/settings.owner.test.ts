/**
 * Owner settings routes (owner-api-v3.md, GET/PATCH /settings, Rule 8): SettingsObject with
 * write-only secrets, nested objects merged key by key (docs/decisions.md), changes shown by the very
 * next public read, an SSO secret change that retires old tokens while voters keep their history.
 */
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { body, createTestContext, type ImportedProject, type Schemas, type TestContext } from "./support/harness.ts";
import { expectStatus, importAccounts, SSO_SECRET } from "./support/owner-accounts.fixture.ts";

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const seed = () => importAccounts(ctx);

const admin = (project: ImportedProject) => `/api/v3/projects/${project.slug}/admin/settings`;
const pub = (project: ImportedProject, path: string) => `/api/v3/projects/${project.slug}${path}`;

const patch = (project: ImportedProject, input: unknown) => ctx.send("PATCH", admin(project), project.secretKey, input);

function ssoToken(sub: string, secret: string): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(new TextEncoder().encode(secret));
}

describe("owner settings", () => {
  it("reads the project object without slug and plan, secrets as *_set booleans", async () => {
    const { project } = await seed();
    const response = await ctx.get(admin(project), project.secretKey);
    const text = await response.clone().text();
    const envelope = await expectStatus(response, 200);
    expect(envelope.data).toEqual({
      name: "Test project",
      description: null,
      logo_url: null,
      banner_url: null,
      currency_symbol: "€",
      show_branding: true,
      is_private: false,
      sso_secret_set: true,
      stripe_webhook_secret_set: false,
      paddle_webhook_secret_set: false,
      allowed_origins: ["https://allowed.example"],
      settings: {
        allow_comments: true,
        allow_suggestions: true,
        allow_voting: true,
        allow_likes: true,
        default_mode: "roadmap",
        score_is_weighted: false,
        show_archived: false,
        show_comments: true,
        show_denied: true,
        show_progress: true,
        show_views: true,
        show_votes: true,
      },
      theme: {
        font: "Inter",
        radius: "8px",
        light: {
          accent: "#4f46e5",
          background: "#ffffff",
          border: "#e5e7eb",
          card_background: "#f9fafb",
          text: "#111827",
          text_secondary: "#6b7280",
        },
        dark: {
          accent: "#818cf8",
          background: "#111827",
          border: "#374151",
          card_background: "#1f2937",
          text: "#f9fafb",
          text_secondary: "#9ca3af",
        },
      },
      notifications: {
        email_enabled: false,
        from_name: "Test project",
        from_address: null,
        reply_to: null,
        digest_minutes: 15,
        board_url: null,
        changelog_url: null,
      },
    });
    expect(text).not.toContain(SSO_SECRET);
    expect(response.headers.get("Cache-Control")).toBe("private, max-age=0");
  });

  it("merges settings and theme key by key; absent keys are unchanged", async () => {
    const { project } = await seed();
    const envelope = await expectStatus(
      await patch(project, {
        name: "Renamed",
        description: "About",
        settings: { show_votes: false },
        theme: { radius: "4px", dark: { accent: "#ff0000" } },
      }),
      200,
    );
    expect(envelope.data).toMatchObject({ name: "Renamed", description: "About", currency_symbol: "€" });
    expect(envelope.data.settings).toMatchObject({ show_votes: false, allow_comments: true, show_denied: true });
    expect(envelope.data.theme).toMatchObject({ font: "Inter", radius: "4px" });
    expect(envelope.data.theme.dark).toEqual({
      accent: "#ff0000",
      background: "#111827",
      border: "#374151",
      card_background: "#1f2937",
      text: "#f9fafb",
      text_secondary: "#9ca3af",
    });
    expect(envelope.data.theme.light.accent).toBe("#4f46e5");
    const read = await expectStatus(await ctx.get(admin(project), project.secretKey), 200);
    expect(read.data).toEqual(envelope.data);
    const cleared = await expectStatus(await patch(project, { description: null }), 200);
    expect(cleared.data.description).toBeNull();
  });

  it("stores secrets write-only: *_set follows, null clears, the secret is never sent back", async () => {
    const { project } = await seed();
    const response = await patch(project, { stripe_webhook_secret: "whsec_owner_test_secret", paddle_webhook_secret: "pdl_ntfset_secret" });
    const text = await response.clone().text();
    const envelope = await expectStatus(response, 200);
    expect(envelope.data).toMatchObject({ stripe_webhook_secret_set: true, paddle_webhook_secret_set: true, sso_secret_set: true });
    expect(text).not.toContain("whsec_owner_test_secret");
    expect(text).not.toContain("pdl_ntfset_secret");
    const stored = await ctx.db
      .selectFrom("projects")
      .select(["stripe_webhook_secret", "paddle_webhook_secret"])
      .where("slug", "=", project.slug)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ stripe_webhook_secret: "whsec_owner_test_secret", paddle_webhook_secret: "pdl_ntfset_secret" });
    const cleared = await expectStatus(await patch(project, { stripe_webhook_secret: null, sso_secret: null }), 200);
    expect(cleared.data).toMatchObject({ stripe_webhook_secret_set: false, paddle_webhook_secret_set: true, sso_secret_set: false });
  });

  it("takes effect on the very next public read (features list, board document)", async () => {
    const { project, ids } = await seed();
    const list = async (): Promise<Schemas["FeatureObject"][]> =>
      (await expectStatus(await ctx.get(pub(project, "/features"), project.secretKey), 200)).data;
    expect((await list()).find((f) => f.id === ids.features.f1)?.vote_count).toBe(3);
    const documentBefore = (await expectStatus(await ctx.get(pub(project, ""), project.secretKey), 200)).data;
    expect(documentBefore.project.name).toBe("Test project");
    await expectStatus(await patch(project, { name: "Now public", settings: { show_votes: false } }), 200);
    expect((await list()).find((f) => f.id === ids.features.f1)?.vote_count).toBeNull();
    const documentAfter = (await expectStatus(await ctx.get(pub(project, ""), project.secretKey), 200)).data;
    expect(documentAfter.project.name).toBe("Now public");
    await expectStatus(await patch(project, { is_private: true }), 200);
    expect((await ctx.get(pub(project, "/features"), project.secretKey)).status).toBe(404);
    expect((await ctx.get(admin(project), project.secretKey)).status).toBe(200);
  });

  it("a new sso_secret retires tokens signed with the old one; the voter keeps its history", async () => {
    const { project, ids } = await seed();
    const identity = (token: string) => ctx.send("POST", pub(project, "/identity"), project.secretKey, undefined, { "X-VF-Token": token });
    const before = await expectStatus(await identity(await ssoToken("bob-sub", SSO_SECRET)), 200);
    expect(before.data.voter_id).toBe(ids.voters.bob);
    const secret = "a-brand-new-sso-secret-for-owner-tests-42";
    await expectStatus(await patch(project, { sso_secret: secret }), 200);
    const old = await identity(await ssoToken("bob-sub", SSO_SECRET));
    expect(old.status).toBe(401);
    expect((await body(old)).error.code).toBe("identity_invalid");
    const after = await expectStatus(await identity(await ssoToken("bob-sub", secret)), 200);
    expect(after.data.voter_id).toBe(ids.voters.bob);
    expect(after.data.voted_feature_ids).toEqual([ids.features.f1, ids.features.f3].sort((a, b) => a - b));
  });

  it("answers 422 naming the field (nested ones by path), refuses unknown keys, changes nothing", async () => {
    const { project } = await seed();
    // Malformed on purpose: each breaks one bound or names an unknown field.
    const cases: [unknown, string][] = [
      [{ slug: "other" }, "slug"],
      [{ plan: "free" }, "plan"],
      [{ sso_secret_set: false }, "sso_secret_set"],
      [{ name: "" }, "name"],
      [{ name: null }, "name"],
      [{ show_branding: "yes" }, "show_branding"],
      [{ sso_secret: "short" }, "sso_secret"],
      [{ logo_url: "javascript:alert(1)" }, "logo_url"],
      [{ allowed_origins: ["https://ok.example", "https://bad.example/path"] }, "allowed_origins[1]"],
      [{ settings: { show_votes: "no" } }, "settings.show_votes"],
      [{ settings: { bogus: true } }, "settings.bogus"],
      [{ settings: null }, "settings"],
      [{ theme: { light: { accent: 5 } } }, "theme.light.accent"],
      [{ theme: { dark: { glow: "#fff" } } }, "theme.dark.glow"],
    ];
    for (const [input, field] of cases) {
      const envelope = await expectStatus(await patch(project, input), 422);
      expect(envelope.error, JSON.stringify(input)).toMatchObject({ code: "validation_failed", field });
    }
    const read = await expectStatus(await ctx.get(admin(project), project.secretKey), 200);
    expect(read.data).toMatchObject({ name: "Test project", show_branding: true, sso_secret_set: true, logo_url: null });
    expect(read.data.settings.show_votes).toBe(true);
  });
});
