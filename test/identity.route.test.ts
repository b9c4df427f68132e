/**
 * POST /projects/{slug}/identity (contract, "Taking part" rule 1, IdentityObject,
 * "Authentication" 6-8): minting, renewing, SSO exchange, precedence, refusals, idempotency.
 */
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashSecret } from "../src/lib/rules/secrets.ts";
import { createTestContext, type Ids, type ImportedProject, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
let p: ImportedProject;
let ids: Ids;
const SSO_SECRET = "identity-route-sso-secret-0123456789abcdef";
const ADA = "anon-ada-identity-route-01";
const BANNED = "anon-banned-identity-route-01";

beforeAll(async () => {
  ctx = await createTestContext();
  p = await ctx.importProject({
    project: { sso_secret: SSO_SECRET },
    voters: [
      { ref: "ada", kind: "anonymous", anon_token: ADA, display_name: "Ada" },
      { ref: "banned", kind: "anonymous", anon_token: BANNED, display_name: "Mallory", banned: true },
      { ref: "sam", kind: "sso", sso_id: "user-sam", display_name: "Sam", email: "sam@example.com" },
    ],
    features: [
      { ref: "f1", board: "roadmap", column: "c-open", heading: "One" },
      { ref: "f2", board: "roadmap", column: "c-planned", heading: "Two" },
      { ref: "f3", board: "roadmap", column: "c-progress", heading: "Three" },
    ],
    votes: [
      { voter: "ada", feature: "f3" },
      { voter: "ada", feature: "f1" },
      { voter: "banned", feature: "f2" },
      { voter: "sam", feature: "f2" },
    ],
  });
  ids = p.ids.ids;
});
afterAll(async () => {
  await ctx?.close();
});

const identityPath = () => `/api/v3/projects/${p.slug}/identity`;
const identify = async (payload?: unknown, headers: Record<string, string> = {}, key = p.secretKey) => {
  const response = await ctx.send("POST", identityPath(), key, payload, headers);
  return { status: response.status, body: await response.json(), response };
};
const sso = (claims: Record<string, unknown>, secret = SSO_SECRET) =>
  new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setExpirationTime("10m").sign(new TextEncoder().encode(secret));

describe("minting", () => {
  it("mints an anonymous voter with no body: 201 and the plaintext token, stored only as its digest", async () => {
    const { status, body } = await identify();
    expect(status).toBe(201);
    expect(body).toEqual({
      data: {
        voter_id: expect.stringMatching(/^v_/),
        kind: "anonymous",
        anon_token: expect.stringMatching(/^fb_anon_[A-Za-z0-9_-]{43}$/),
        display_name: expect.stringMatching(/^\S+ \S+ \d{4}$/),
        banned: false,
        voted_feature_ids: [],
      },
      meta: null,
      error: null,
    });
    const row = await ctx.db
      .selectFrom("voters")
      .select(["anon_token_hash", "kind"])
      .where("public_id", "=", body.data.voter_id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ anon_token_hash: hashSecret(body.data.anon_token), kind: "anonymous" });
  });

  it("mints with {} and with an empty JSON body, a new voter each time", async () => {
    const a = await identify({});
    const b = await identify("", { "Content-Type": "application/json" });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.data.voter_id).not.toBe(b.body.data.voter_id);
    expect(a.body.data.anon_token).not.toBe(b.body.data.anon_token);
  });

  it("mints with the embed key too", async () => {
    expect((await identify(undefined, {}, p.embedKey)).status).toBe(201);
  });

  it("gives a token that works as X-VF-Anon on writes and renews with 200", async () => {
    const minted = (await identify()).body.data;
    const vote = await ctx.send(
      "POST",
      `/api/v3/projects/${p.slug}/features/${ids.features.f1}/comments`,
      p.secretKey,
      { content: "hi" },
      {
        "X-VF-Anon": minted.anon_token,
      },
    );
    expect(vote.status).toBe(201);
    expect((await vote.json()).data.author_name).toBe(minted.display_name);
    for (const renewal of [
      await identify({ anon_token: minted.anon_token }),
      await identify(undefined, { "X-VF-Anon": minted.anon_token }),
    ]) {
      expect(renewal.status).toBe(200);
      expect(renewal.body.data).toEqual({ ...minted, voted_feature_ids: [] });
    }
  });
});

describe("renewing an anonymous identity", () => {
  it("answers 200 with the voter's whole vote history, ascending", async () => {
    const { status, body } = await identify({ anon_token: ADA });
    expect(status).toBe(200);
    expect(body.data).toEqual({
      voter_id: ids.voters.ada,
      kind: "anonymous",
      anon_token: ADA,
      display_name: "Ada",
      banned: false,
      voted_feature_ids: [ids.features.f1!, ids.features.f3!].sort((a, b) => a - b),
    });
  });

  it("reports a banned voter as banned", async () => {
    const { status, body } = await identify(undefined, { "X-VF-Anon": BANNED });
    expect(status).toBe(200);
    expect(body.data).toMatchObject({ voter_id: ids.voters.banned, banned: true, voted_feature_ids: [ids.features.f2] });
  });

  it("answers 401 identity_invalid for an unknown token and another project's token", async () => {
    const other = await ctx.importProject({ voters: [{ ref: "x", kind: "anonymous", anon_token: "anon-foreign-identity-route-01" }] });
    expect(other.slug).not.toBe(p.slug);
    for (const attempt of [
      await identify({ anon_token: "fb_anon_unknown" }),
      await identify(undefined, { "X-VF-Anon": "fb_anon_unknown" }),
      await identify({ anon_token: "anon-foreign-identity-route-01" }),
    ]) {
      expect(attempt.status).toBe(401);
      expect(attempt.body).toEqual({
        data: null,
        meta: null,
        error: { code: "identity_invalid", field: null, message: expect.any(String) },
      });
    }
  });

  it("answers 422 naming the field for a token that is not a non-empty string", async () => {
    for (const [payload, field] of [
      [{ anon_token: 5 }, "anon_token"],
      [{ anon_token: "" }, "anon_token"],
      [{ sso_token: ["x"] }, "sso_token"],
    ] as const) {
      const { status, body } = await identify(payload);
      expect(status).toBe(422);
      expect(body.error).toMatchObject({ code: "validation_failed", field });
    }
  });
});

describe("exchanging an SSO token", () => {
  it("creates the voter on first sight (201) and refreshes its name afterwards (200)", async () => {
    const first = await identify({ sso_token: await sso({ sub: "user-new", name: "Nora", email: "nora@example.com" }) });
    expect(first.status).toBe(201);
    expect(first.body.data).toEqual({
      voter_id: expect.stringMatching(/^v_/),
      kind: "sso",
      anon_token: null,
      display_name: "Nora",
      banned: false,
      voted_feature_ids: [],
    });
    const again = await identify(undefined, { "X-VF-Token": await sso({ sub: "user-new", name: "Nora B." }) });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual({ ...first.body.data, display_name: "Nora B." });
    const row = await ctx.db
      .selectFrom("voters")
      .select(["email", "sso_id"])
      .where("public_id", "=", first.body.data.voter_id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ email: "nora@example.com", sso_id: "user-new" });
  });

  it("resolves an existing SSO voter with 200 and keeps its name when the token carries none", async () => {
    const { status, body } = await identify({ sso_token: await sso({ sub: "user-sam" }) });
    expect(status).toBe(200);
    expect(body.data).toEqual({
      voter_id: ids.voters.sam,
      kind: "sso",
      anon_token: null,
      display_name: "Sam",
      banned: false,
      voted_feature_ids: [ids.features.f2],
    });
  });

  it("gives a nameless new SSO user a generated handle", async () => {
    const { status, body } = await identify({ sso_token: await sso({ sub: "user-nameless" }) });
    expect(status).toBe(201);
    expect(body.data.display_name).toMatch(/^\S+ \S+ \d{4}$/);
  });

  it("lets an SSO token outrank an anonymous one, in the body and in headers", async () => {
    const token = await sso({ sub: "user-sam" });
    const body = await identify({ anon_token: ADA, sso_token: token });
    const headers = await identify(undefined, { "X-VF-Token": token, "X-VF-Anon": ADA });
    const mixed = await identify({ anon_token: ADA }, { "X-VF-Token": token });
    for (const result of [body, headers, mixed]) {
      expect(result.status).toBe(200);
      expect(result.body.data.voter_id).toBe(ids.voters.sam);
    }
    const invalid = await identify({ anon_token: ADA, sso_token: await sso({ sub: "user-sam" }, "wrong-secret-wrong-secret-wrong") });
    expect(invalid.status).toBe(401);
    expect(invalid.body.error.code).toBe("identity_invalid");
  });

  it("answers 401 identity_invalid for a bad token and on a project without an SSO secret", async () => {
    expect((await identify({ sso_token: "not.a.jwt" })).body.error.code).toBe("identity_invalid");
    const plain = await ctx.importProject({});
    const response = await ctx.send("POST", `/api/v3/projects/${plain.slug}/identity`, plain.secretKey, {
      sso_token: await sso({ sub: "x" }),
    });
    expect(response.status).toBe(401);
    expect((await response.json()).error.code).toBe("identity_invalid");
  });
});

describe("idempotency on the identity route", () => {
  it("never replays a mint sent with no identity: one client's anon_token must not reach another", async () => {
    const headers = { "Idempotency-Key": `mint-${Math.random()}` };
    const first = await identify(undefined, headers);
    const second = await identify(undefined, headers);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.response.headers.get("Idempotent-Replay")).toBeNull();
    expect(second.body.data.voter_id).not.toBe(first.body.data.voter_id);
    expect(second.body.data.anon_token).not.toBe(first.body.data.anon_token);
  });

  it("scopes records by the presented token, so two voters never share a response", async () => {
    const key = `renew-${Math.random()}`;
    const ada = await identify(undefined, { "Idempotency-Key": key, "X-VF-Anon": ADA });
    const banned = await identify(undefined, { "Idempotency-Key": key, "X-VF-Anon": BANNED });
    expect(ada.body.data.voter_id).toBe(ids.voters.ada);
    expect(banned.body.data.voter_id).toBe(ids.voters.banned);
    expect(banned.response.headers.get("Idempotent-Replay")).toBeNull();
  });
});
