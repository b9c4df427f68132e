/**
 * Key and identity errors on keyed routes (contract, "Authentication" 1-8 and "Errors"), probed
 * through GET and POST /projects/{slug}/features/{id}/comments: missing_key, invalid_key
 * (unknown and regenerated), key_wrong_project, not_allowed below PRO, origin_not_allowed for the
 * embed key only, private projects, identity_required, identity_invalid for every malformed or
 * foreign identity, and X-VF-Token outranking X-VF-Anon.
 */
import { SignJWT, UnsecuredJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { regenerateKey } from "../src/routes/keys/keys.owner.repository.ts";
import { type Answer, createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
let p: ImportedProject;
let other: ImportedProject;
const SSO_SECRET = "auth-security-sso-secret-0123456789abcdef";
const ADA = "anon-ada-auth-security-01";
const FOREIGN = "anon-foreign-auth-security-01";
const seed = (extra: { token?: string; project?: Record<string, unknown> } = {}) => ({
  voters: [{ ref: "ada", kind: "anonymous", anon_token: extra.token ?? null, display_name: "Ada" }],
  features: [{ ref: "f", board: "roadmap", column: "c-open", heading: "Probe" }],
  comments: [{ ref: "c", feature: "f", voter: "ada", content: "probe comment" }],
  ...(extra.project ? { project: extra.project } : {}),
});

beforeAll(async () => {
  ctx = await createTestContext();
  p = await ctx.importProject(seed({ token: ADA, project: { sso_secret: SSO_SECRET } }));
  other = await ctx.importProject(seed({ token: FOREIGN, project: { sso_secret: SSO_SECRET } }));
});
afterAll(async () => {
  await ctx?.close();
});

const commentsPath = (project: ImportedProject) => `/api/v3/projects/${project.slug}/features/${project.ids.ids.features.f}/comments`;
const read = (key: string, headers: Record<string, string> = {}, project = p) => ctx.get(commentsPath(project), key, headers);
const write = (key: string, headers: Record<string, string> = {}, project = p) =>
  ctx.send("POST", commentsPath(project), key, { content: "probe" }, headers);
async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(await response.json()).toEqual({ data: null, meta: null, error: { code, field: null, message: expect.any(String) } });
}

const encoder = new TextEncoder();
const now = () => Math.floor(Date.now() / 1000);
const signed = (claims: Record<string, unknown>, options: { alg?: string; secret?: string } = {}) =>
  new SignJWT(claims).setProtectedHeader({ alg: options.alg ?? "HS256" }).sign(encoder.encode(options.secret ?? SSO_SECRET));

describe("project key", () => {
  it("missing_key without X-API-Key (and with a blank one)", async () => {
    await expectError(await ctx.app.request(commentsPath(p)), 401, "missing_key");
    await expectError(
      await ctx.app.request(commentsPath(p), { method: "POST", body: "{}", headers: { "Content-Type": "application/json" } }),
      401,
      "missing_key",
    );
    await expectError(await read("   "), 401, "missing_key");
  });

  it("invalid_key for an unknown key and for a key that was regenerated", async () => {
    await expectError(await read("test_sk_this-key-does-not-exist-anywhere"), 401, "invalid_key");
    const project = await ctx.importProject(seed());
    expect((await read(project.secretKey, {}, project)).status).toBe(200);
    const fresh = await regenerateKey(ctx.db, project.slug, "secret");
    await ctx.announceAdminChange(project.slug);
    await expectError(await read(project.secretKey, {}, project), 401, "invalid_key");
    await expectError(await write(project.secretKey, { "X-VF-Anon": "whatever" }, project), 401, "invalid_key");
    expect((await read(fresh, {}, project)).status).toBe(200);
    // Regenerating one kind leaves the other kind's key working.
    expect((await read(project.embedKey, {}, project)).status).toBe(200);
  });

  it("key_wrong_project for a valid key of another project", async () => {
    await expectError(await read(other.secretKey), 403, "key_wrong_project");
    await expectError(await write(other.embedKey, { "X-VF-Anon": FOREIGN }), 403, "key_wrong_project");
  });

  it("not_allowed on every request when the owner's plan is below PRO", async () => {
    const free = await ctx.importProject(seed({ project: { plan: "free" } }));
    await expectError(await read(free.secretKey, {}, free), 403, "not_allowed");
    await expectError(await write(free.embedKey, {}, free), 403, "not_allowed");
    await expectError(await ctx.send("POST", `/api/v3/projects/${free.slug}/identity`, free.secretKey), 403, "not_allowed");
  });

  it("404 for a private project, with its own key or another's", async () => {
    const hidden = await ctx.importProject(seed({ project: { is_private: true } }));
    await expectError(await read(hidden.secretKey, {}, hidden), 404, "not_found");
    await expectError(await read(p.secretKey, {}, hidden), 404, "not_found");
  });
});

describe("origin allowlist", () => {
  it("origin_not_allowed for the embed key from an origin off the allowlist (exact match)", async () => {
    for (const origin of [
      "https://evil.example",
      "https://allowed.example.evil.example",
      "null",
      "http://allowed.example",
      "https://allowed.example/",
    ]) {
      await expectError(await read(p.embedKey, { Origin: origin }), 403, "origin_not_allowed");
    }
    await expectError(await write(p.embedKey, { Origin: "https://evil.example", "X-VF-Anon": ADA }), 403, "origin_not_allowed");
  });

  it("accepts the embed key from an allowed origin and without an Origin header", async () => {
    expect((await read(p.embedKey, { Origin: "https://allowed.example" })).status).toBe(200);
    expect((await read(p.embedKey)).status).toBe(200);
    expect((await write(p.embedKey, { Origin: "https://allowed.example", "X-VF-Anon": ADA })).status).toBe(201);
  });

  it("never refuses the secret key for its origin", async () => {
    expect((await read(p.secretKey, { Origin: "https://evil.example" })).status).toBe(200);
    expect((await write(p.secretKey, { Origin: "null", "X-VF-Anon": ADA })).status).toBe(201);
  });
});

describe("voter identity", () => {
  it("identity_required on writes without an identity (and with blank headers); reads need none", async () => {
    await expectError(await write(p.secretKey), 401, "identity_required");
    await expectError(await write(p.secretKey, { "X-VF-Anon": "", "X-VF-Token": "" }), 401, "identity_required");
    const base = `/api/v3/projects/${p.slug}/comments/${p.ids.ids.comments.c}`;
    await expectError(await ctx.send("DELETE", base, p.secretKey), 401, "identity_required");
    await expectError(await ctx.send("POST", `${base}/like`, p.secretKey), 401, "identity_required");
    expect((await read(p.secretKey)).status).toBe(200);
  });

  it("identity_invalid for an unknown anonymous token and another project's, on reads and writes", async () => {
    for (const token of ["fb_anon_never-minted-token", FOREIGN]) {
      await expectError(await read(p.secretKey, { "X-VF-Anon": token }), 401, "identity_invalid");
      await expectError(await write(p.secretKey, { "X-VF-Anon": token }), 401, "identity_invalid");
    }
  });

  it("identity_invalid for every malformed, expired, forged or incomplete SSO token", async () => {
    const exp = now() + 600;
    const valid = await signed({ sub: "user-1", exp });
    const [header, payload, signature] = valid.split(".");
    const tamperedPayload = Buffer.from(JSON.stringify({ sub: "user-2", exp })).toString("base64url");
    const flipped = signature!.slice(0, -2) + (signature!.endsWith("AA") ? "BB" : "AA");
    const cases: Record<string, string> = {
      "alg none": new UnsecuredJWT({ sub: "user-1" }).setExpirationTime(exp).encode(),
      HS512: await signed({ sub: "user-1", exp }, { alg: "HS512" }),
      "tampered payload": `${header}.${tamperedPayload}.${signature}`,
      "tampered signature": `${header}.${payload}.${flipped}`,
      "missing exp": await signed({ sub: "user-1" }),
      "expired exp": await signed({ sub: "user-1", exp: now() - 3600 }),
      "nbf in the future": await signed({ sub: "user-1", exp, nbf: now() + 3600 }),
      "wrong secret": await signed({ sub: "user-1", exp }, { secret: "a-completely-different-secret-0123456789" }),
      "missing sub": await signed({ name: "Nobody", exp }),
      "empty sub": await signed({ sub: "", exp }),
      garbage: "this is not a token",
    };
    for (const [name, token] of Object.entries(cases)) {
      const onRead = await read(p.secretKey, { "X-VF-Token": token });
      expect(onRead.status, name).toBe(401);
      expect((await onRead.json()).error.code, name).toBe("identity_invalid");
      const onWrite = await write(p.secretKey, { "X-VF-Token": token });
      expect(onWrite.status, name).toBe(401);
      expect((await onWrite.json()).error.code, name).toBe("identity_invalid");
    }
    // The valid token of the same shape is accepted, so the refusals above are the claims' doing.
    expect((await write(p.secretKey, { "X-VF-Token": valid })).status).toBe(201);
  });

  it("identity_invalid for an SSO token on a project without an SSO secret", async () => {
    const plain = await ctx.importProject(seed());
    const token = await signed({ sub: "user-1", exp: now() + 600 });
    await expectError(await write(plain.secretKey, { "X-VF-Token": token }, plain), 401, "identity_invalid");
  });

  it("lets X-VF-Token outrank X-VF-Anon", async () => {
    const token = await signed({ sub: "user-outranks", name: "Token User", exp: now() + 600 });
    const response = await write(p.secretKey, { "X-VF-Token": token, "X-VF-Anon": ADA });
    expect(response.status).toBe(201);
    expect((await response.json()).data.author_name).toBe("Token User");
    // A bad token is not rescued by a good anonymous token.
    await expectError(await write(p.secretKey, { "X-VF-Token": "garbage", "X-VF-Anon": ADA }), 401, "identity_invalid");
  });

  it("reads with a valid SSO token of a user not seen before as an identity with nothing of its own", async () => {
    const token = await signed({ sub: "user-reader-only", exp: now() + 600 });
    const response = await read(p.secretKey, { "X-VF-Token": token });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Answer<"/api/v3/projects/{slug}/features/{id}/comments", "get">;
    expect(body.data.every((c) => c.is_own === false && c.has_liked === false)).toBe(true);
  });
});
