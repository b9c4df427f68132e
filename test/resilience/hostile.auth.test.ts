/**
 * Hostile authentication and authorisation input (OWASP API Security Top 10 2023: API1 broken
 * object level authorisation, API2 broken authentication, API3 broken object property level
 * authorisation, API5 broken function level authorisation), in process through the harness.
 */
import { generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashSecret } from "../../src/lib/rules/secrets.ts";
import { createTestContext, type ImportedProject, randomKey, type TestContext } from "../support/harness.ts";
import { expectEnvelope, expectError } from "./support/assertions.ts";
import { idsOf } from "./support/seed.ts";
import { recordCount } from "./support/tally.ts";

const SECRET = "sso-secret-of-the-hostile-suite-0123456789";
const OTHER_SECRET = "sso-secret-of-another-project-9876543210";
let ctx: TestContext;
let p: ImportedProject;
let other: ImportedProject;
let ids: any;
const anonA = `anon-hostile-a-${Date.now()}-0001`;
const anonB = `anon-hostile-b-${Date.now()}-0002`;

beforeAll(async () => {
  ctx = await createTestContext();
  p = await ctx.importProject({
    project: { sso_secret: SECRET, allowed_origins: ["https://allowed.example"] },
    voters: [
      { ref: "a", kind: "anonymous", anon_token: anonA, display_name: "Alice" },
      { ref: "b", kind: "anonymous", anon_token: anonB, display_name: "Bob" },
    ],
    features: [
      { ref: "f", board: "roadmap", column: "c-open", heading: "Target", description: "Hostile target" },
      { ref: "g", board: "roadmap", column: "c-open", heading: "Second", description: "Second target" },
    ],
    votes: [{ voter: "a", feature: "f" }],
    comments: [{ ref: "ca", feature: "f", voter: "a", content: "Alice's comment" }],
  });
  ids = idsOf(p);
  other = await ctx.importProject({ project: { sso_secret: OTHER_SECRET } });
});
afterAll(() => ctx.close());

const enc = new TextEncoder();
const now = () => Math.floor(Date.now() / 1000);
const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");

function hs(alg: "HS256" | "HS512", secret: string, claims: Record<string, unknown>, exp: number | null = now() + 600) {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg, typ: "JWT" }).setIssuedAt();
  if (exp !== null) jwt.setExpirationTime(exp);
  return jwt.sign(enc.encode(secret));
}

async function hostileTokens(): Promise<Record<string, string>> {
  const valid = await hs("HS256", SECRET, { sub: "user-1", name: "User One" });
  const [header, payload, signature] = valid.split(".");
  const flipped = signature!.slice(0, -2) + (signature!.endsWith("AA") ? "BB" : "AA");
  const { privateKey } = await generateKeyPair("RS256");
  return {
    "alg none": `${b64({ alg: "none", typ: "JWT" })}.${b64({ sub: "user-1", exp: now() + 600 })}.`,
    "alg none, signature kept": `${b64({ alg: "none", typ: "JWT" })}.${payload}.${signature}`,
    "alg NONE": `${b64({ alg: "NONE", typ: "JWT" })}.${b64({ sub: "user-1", exp: now() + 600 })}.`,
    HS512: await hs("HS512", SECRET, { sub: "user-1" }),
    RS256: await new SignJWT({ sub: "user-1" })
      .setProtectedHeader({ alg: "RS256" })
      .setExpirationTime(now() + 600)
      .sign(privateKey),
    "tampered signature": `${header}.${payload}.${flipped}`,
    "tampered payload": `${header}.${b64({ sub: "admin", exp: now() + 600 })}.${signature}`,
    "no exp": await hs("HS256", SECRET, { sub: "user-1" }, null),
    "exp past": await hs("HS256", SECRET, { sub: "user-1" }, now() - 3600),
    "nbf future": await new SignJWT({ sub: "user-1", nbf: now() + 3600 })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime(now() + 7200)
      .sign(enc.encode(SECRET)),
    "another project's secret": await hs("HS256", OTHER_SECRET, { sub: "user-1" }),
    "no sub": await hs("HS256", SECRET, { name: "Nobody" }),
    "empty secret": await hs("HS256", "", { sub: "user-1" }).catch(() => "eyJhbGciOiJIUzI1NiJ9.e30."),
    "not a JWT": "definitely-not-a-jwt",
    "three garbage parts": "abc.def.ghi",
    huge: "a".repeat(8000),
  };
}

describe("SSO tokens (API2)", () => {
  it("accepts a valid HS256 token (control)", async () => {
    const token = await hs("HS256", SECRET, { sub: "user-control" });
    const response = await ctx.send("POST", `/api/v3/projects/${p.slug}/features/${ids.features.g}/vote`, p.secretKey, undefined, {
      "X-VF-Token": token,
    });
    expect(response.status).toBe(200);
  });

  it("refuses alg none, HS512, RS256, tampering, missing or past exp, future nbf and foreign secrets with 401 identity_invalid", async () => {
    const tokens = await hostileTokens();
    for (const [name, token] of Object.entries(tokens)) {
      const write = await ctx.send("POST", `/api/v3/projects/${p.slug}/features/${ids.features.g}/vote`, p.secretKey, undefined, {
        "X-VF-Token": token,
      });
      expect(write.status, `${name} on a write`).toBe(401);
      expectError(401, await write.json(), "identity_invalid");
      const read = await ctx.get(`/api/v3/projects/${p.slug}/features/${ids.features.g}`, p.secretKey, { "X-VF-Token": token });
      expect(read.status, `${name} on a read`).toBe(401);
      expectError(401, await read.json(), "identity_invalid");
      const exchange = await ctx.send("POST", `/api/v3/projects/${p.slug}/identity`, p.secretKey, { sso_token: token });
      expect(exchange.status, `${name} on the identity route`).toBe(401);
      expectError(401, await exchange.json(), "identity_invalid");
    }
    // X-VF-Token outranks X-VF-Anon: a bad token is not rescued by a good anonymous token.
    const both = await ctx.send("POST", `/api/v3/projects/${p.slug}/features/${ids.features.g}/vote`, p.secretKey, undefined, {
      "X-VF-Token": tokens["alg none"]!,
      "X-VF-Anon": anonB,
    });
    expect(both.status).toBe(401);
    // Nothing was created for the refused tokens.
    const ssoVoters = await ctx.db
      .selectFrom("voters")
      .innerJoin("projects", "projects.id", "voters.project_id")
      .select("voters.sso_id")
      .where("projects.slug", "=", p.slug)
      .where("voters.kind", "=", "sso")
      .execute();
    expect(ssoVoters.map((v) => v.sso_id).filter((id) => id !== "user-verbatim")).toEqual(["user-control"]);
    recordCount("hostile", "SSO tokens refused (write, read, identity route)", Object.keys(tokens).length * 3 + 1);
  });

  it("carries an SSO name holding SQL and Unicode verbatim into the display name and comment author", async () => {
    const name = "Ro'bert\"); DROP TABLE voters;-- 👩‍👩‍👧 e\u0301 \u202eRTL";
    const token = await hs("HS256", SECRET, { sub: "user-verbatim", name });
    const identity = await ctx.send("POST", `/api/v3/projects/${p.slug}/identity`, p.secretKey, { sso_token: token });
    expect([200, 201]).toContain(identity.status);
    expect((await identity.json()).data.display_name).toBe(name);
    const comment = await ctx.send(
      "POST",
      `/api/v3/projects/${p.slug}/features/${ids.features.g}/comments`,
      p.secretKey,
      { content: "verbatim" },
      { "X-VF-Token": token },
    );
    expect(comment.status).toBe(201);
    expect((await comment.json()).data.author_name).toBe(name);
  });

  it("refuses an anonymous token of another project or an unknown one with 401 identity_invalid", async () => {
    for (const anon of ["anon-unknown-token-000000000", anonA.toUpperCase(), `${anonA} `]) {
      const response = await ctx.send("POST", `/api/v3/projects/${other.slug}/features/1/vote`, other.secretKey, undefined, {
        "X-VF-Anon": anon,
      });
      expect(response.status).toBe(401);
      expectError(401, await response.json(), "identity_invalid");
    }
    const foreign = await ctx.send("POST", `/api/v3/projects/${other.slug}/identity`, other.secretKey, { anon_token: anonA });
    expect(foreign.status).toBe(401);
    expectError(401, await foreign.json(), "identity_invalid");
    recordCount("hostile", "foreign or unknown anonymous tokens refused", 4);
  });
});

describe("embed key origins (API2, API5)", () => {
  const origins = [
    "https://evil.example",
    "https://allowed.example.evil.example",
    "null",
    "http://allowed.example",
    "https://allowed.example.",
    "https://ALLOWED.EXAMPLE",
    "https://allowed.example:443",
    "https://allowed.example/",
    "https://evil.example#https://allowed.example",
  ];

  it("answers 403 origin_not_allowed for every origin not exactly on the allowlist", async () => {
    for (const origin of origins) {
      const response = await ctx.get(`/api/v3/projects/${p.slug}`, p.embedKey, { Origin: origin });
      expect(response.status, origin).toBe(403);
      expectError(403, await response.json(), "origin_not_allowed");
    }
    const write = await ctx.send("POST", `/api/v3/projects/${p.slug}/features/${ids.features.g}/vote`, p.embedKey, undefined, {
      Origin: "https://evil.example",
      "X-VF-Anon": anonB,
    });
    expectError(403, await write.json(), "origin_not_allowed");
    expect(await ctx.db.selectFrom("votes").select("voter_id").where("feature_id", "=", ids.features.g).execute()).toHaveLength(1); // the control vote only
    recordCount("hostile", "embed key from a foreign origin refused", origins.length + 1);
  });

  it("serves the allowed origin, and the secret key from any origin (control)", async () => {
    expect((await ctx.get(`/api/v3/projects/${p.slug}`, p.embedKey, { Origin: "https://allowed.example" })).status).toBe(200);
    expect((await ctx.get(`/api/v3/projects/${p.slug}`, p.embedKey)).status).toBe(200);
    expect((await ctx.get(`/api/v3/projects/${p.slug}`, p.secretKey, { Origin: "https://evil.example" })).status).toBe(200);
  });

  it("refuses the embed key on both revenue routes with 403", async () => {
    for (const path of ["voters", "voters?churned=true&per_page=100", "revenue/features", "revenue/features?sort=priority"]) {
      const response = await ctx.get(`/api/v3/projects/${p.slug}/${path}`, p.embedKey);
      expect(response.status, path).toBe(403);
      expectError(403, await response.json(), "not_allowed");
    }
    expect((await ctx.get(`/api/v3/projects/${p.slug}/voters`, p.secretKey)).status).toBe(200);
    recordCount("hostile", "embed key on revenue routes refused", 4);
  });
});

describe("project keys (API2)", () => {
  it("answers unknown, regenerated and malformed keys with one identical 401", async () => {
    const regenerated = await ctx.importProject({});
    // Regeneration (src/routes/keys/keys.owner.repository.ts semantics): the old secret key's row is replaced.
    const project = await ctx.db.selectFrom("projects").select("id").where("slug", "=", regenerated.slug).executeTakeFirstOrThrow();
    await ctx.db.deleteFrom("api_keys").where("project_id", "=", project.id).where("kind", "=", "secret").execute();
    await ctx.db
      .insertInto("api_keys")
      .values({ project_id: project.id, kind: "secret", key_hash: hashSecret(randomKey("sk")) })
      .execute();

    const keys = {
      unknown: randomKey("sk"),
      regenerated: regenerated.secretKey,
      "another kind's prefix": `fb_ek_${"x".repeat(43)}`,
      "one character": "x",
      SQL: "' OR '1'='1' --",
      "very long": "k".repeat(4096),
      "latin-1": "cl\u00e9-\u00fc-\u00df",
      "the digest instead of the key": hashSecret(p.secretKey),
      "the key with a space": `${p.secretKey} x`,
      "the key upper-cased": p.secretKey.toUpperCase(),
    };
    const bodies = new Set<string>();
    for (const [name, key] of Object.entries(keys)) {
      for (const path of [
        `/api/v3/projects/${p.slug}`,
        `/api/v3/projects/${p.slug}/features`,
        "/api/v3/board",
        `/api/v3/projects/no-such-project`,
      ]) {
        const response = await ctx.get(path, key);
        expect(response.status, `${name} ${path}`).toBe(401);
        const text = await response.text();
        expectError(401, JSON.parse(text), "invalid_key");
        expect(response.headers.get("X-RateLimit-Remaining")).toBeNull();
        bodies.add(text);
      }
    }
    expect([...bodies]).toHaveLength(1);
    // The regenerated project's new key and the others still work.
    expect((await ctx.get(`/api/v3/projects/${p.slug}`, p.secretKey)).status).toBe(200);
    recordCount("hostile", "unknown, regenerated or malformed keys refused alike", Object.keys(keys).length * 4);
  });

  it("answers a missing or blank key with 401 missing_key, and another project's key with key_wrong_project", async () => {
    for (const key of ["", "   "]) {
      const response = await ctx.get(`/api/v3/projects/${p.slug}`, key);
      expectError(401, await response.json(), "missing_key");
    }
    const wrong = await ctx.get(`/api/v3/projects/${p.slug}`, other.secretKey);
    expectError(403, await wrong.json(), "key_wrong_project");
    recordCount("hostile", "missing or foreign keys refused", 3);
  });
});

describe("one voter against another's data (API1)", () => {
  it("cannot delete another voter's comment, nor see it as own or as voted", async () => {
    const path = `/api/v3/projects/${p.slug}/comments/${ids.comments.ca}`;
    const deleted = await ctx.send("DELETE", path, p.secretKey, undefined, { "X-VF-Anon": anonB });
    expect([403, 404]).toContain(deleted.status);
    const body = await deleted.json();
    expectError(deleted.status, body);
    expect(body.data).toBeNull();
    expect(await ctx.db.selectFrom("comments").select("id").where("id", "=", ids.comments.ca).execute()).toHaveLength(1);

    const listed = await ctx.get(`/api/v3/projects/${p.slug}/features/${ids.features.f}/comments`, p.secretKey, { "X-VF-Anon": anonB });
    const comment = (await listed.json()).data.find((c: { id: number }) => c.id === ids.comments.ca);
    expect(comment.is_own).toBe(false);
    const asAuthor = await ctx.get(`/api/v3/projects/${p.slug}/features/${ids.features.f}/comments`, p.secretKey, { "X-VF-Anon": anonA });
    expect((await asAuthor.json()).data.find((c: { id: number }) => c.id === ids.comments.ca).is_own).toBe(true);

    const feature = await ctx.get(`/api/v3/projects/${p.slug}/features/${ids.features.f}`, p.secretKey, { "X-VF-Anon": anonB });
    expect((await feature.json()).data.has_voted).toBe(false);
    const withdraw = await ctx.send("DELETE", `/api/v3/projects/${p.slug}/features/${ids.features.f}/vote`, p.secretKey, undefined, {
      "X-VF-Anon": anonB,
    });
    expect(withdraw.status).toBe(409); // Bob has no vote to withdraw; Alice's stays
    expect(await ctx.db.selectFrom("votes").select("voter_id").where("feature_id", "=", ids.features.f).execute()).toHaveLength(1);
    recordCount("hostile", "cross-voter delete / withdraw refused", 2);
  });

  it("never replays one voter's idempotent response to another voter using the same key", async () => {
    const path = `/api/v3/projects/${p.slug}/features/${ids.features.g}/comments`;
    const headers = (anon: string) => ({ "X-VF-Anon": anon, "Idempotency-Key": "shared-key-string" });
    const alice = await ctx.send("POST", path, p.secretKey, { content: "same body" }, headers(anonA));
    expect(alice.status).toBe(201);
    const bob = await ctx.send("POST", path, p.secretKey, { content: "same body" }, headers(anonB));
    expect(bob.status).toBe(201);
    expect(bob.headers.get("Idempotent-Replay")).toBeNull();
    const a = (await alice.json()).data;
    const b = (await bob.json()).data;
    expect(b.id).not.toBe(a.id);
    expect(b.author_name).toBe("Bob");
    expect(b.is_own).toBe(true);
    // Each voter's own replay is still theirs.
    const aliceAgain = await ctx.send("POST", path, p.secretKey, { content: "same body" }, headers(anonA));
    expect(aliceAgain.headers.get("Idempotent-Replay")).toBe("true");
    expect((await aliceAgain.json()).data.id).toBe(a.id);
    recordCount("hostile", "idempotency replay across voters refused", 1);
  });
});

describe("body fields the client must not set (API3)", () => {
  it("ignores vote_count, is_approved, voter_id and the like on a suggestion", async () => {
    const response = await ctx.send(
      "POST",
      `/api/v3/projects/${p.slug}/features`,
      p.secretKey,
      {
        heading: "Mass assignment",
        description: "Sets what it must not",
        is_approved: true,
        is_pinned: true,
        vote_count: 999,
        score: 999,
        comment_count: 5,
        status: "done",
        voter_id: "v_someone_else",
        id: 1,
        author_voter_id: 1,
        project_id: 1,
        progress: 100,
        developer_response: "Yes!",
        view_count: 10_000,
      },
      { "X-VF-Anon": anonB },
    );
    if (response.status === 422) {
      expectError(422, await response.json(), "validation_failed");
    } else {
      expect(response.status).toBe(201);
      const data = (await response.json()).data;
      expect(data).toMatchObject({
        is_approved: false,
        is_pinned: false,
        vote_count: 0,
        comment_count: 0,
        status: "open",
        developer_response: null,
        progress: null,
        view_count: 0,
      });
      expect(data.id).not.toBe(1);
      const row = await ctx.db
        .selectFrom("features")
        .innerJoin("voters", "voters.id", "features.author_voter_id")
        .select(["voters.display_name", "features.is_approved", "features.project_id"])
        .where("features.id", "=", data.id)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ display_name: "Bob", is_approved: false });
    }
    recordCount("hostile", "server-owned fields on a suggestion ignored", 1);
  });

  it("ignores like_count, author_role, author_name, voter_id and feature_id on a comment", async () => {
    const response = await ctx.send(
      "POST",
      `/api/v3/projects/${p.slug}/features/${ids.features.g}/comments`,
      p.secretKey,
      {
        content: "Mass assignment comment",
        like_count: 50,
        author_role: "owner",
        author_name: "The Owner",
        is_own: false,
        voter_id: "v_someone_else",
        feature_id: ids.features.f,
        has_liked: true,
        id: 1,
        created_at: "2000-01-01T00:00:00Z",
      },
      { "X-VF-Anon": anonB },
    );
    if (response.status === 422) {
      expectError(422, await response.json(), "validation_failed");
    } else {
      expect(response.status).toBe(201);
      const data = (await response.json()).data;
      expect(data).toMatchObject({
        like_count: 0,
        author_role: null,
        author_name: "Bob",
        is_own: true,
        has_liked: false,
        feature_id: ids.features.g,
      });
      expect(data.created_at).not.toBe("2000-01-01T00:00:00.000Z");
    }
    recordCount("hostile", "server-owned fields on a comment ignored", 1);
  });

  it("does not let an identity request choose its voter id, kind or ban state", async () => {
    const response = await ctx.send("POST", `/api/v3/projects/${p.slug}/identity`, p.secretKey, {
      voter_id: idsOf(p).voters.a,
      kind: "sso",
      banned: false,
      display_name: "Admin",
    });
    if (response.status === 422) {
      expectError(422, await response.json(), "validation_failed");
    } else {
      expect(response.status).toBe(201);
      const data = (await response.json()).data;
      expect(data.voter_id).not.toBe(idsOf(p).voters.a);
      expect(data.kind).toBe("anonymous");
      expect(data.display_name).not.toBe("Admin");
      expect(data.voted_feature_ids).toEqual([]);
    }
    recordCount("hostile", "server-owned fields on an identity ignored", 1);
  });

  it("keeps every body envelope-shaped", async () => {
    const response = await ctx.send(
      "POST",
      `/api/v3/projects/${p.slug}/features/${ids.features.g}/vote`,
      p.secretKey,
      { vote_count: 1000, weight: 50 },
      { "X-VF-Anon": anonB },
    );
    expect([200, 409, 422]).toContain(response.status);
    expectEnvelope(await response.json());
    const row = await ctx.db
      .selectFrom("votes")
      .innerJoin("voters", "voters.id", "votes.voter_id")
      .select("votes.weight")
      .where("votes.feature_id", "=", ids.features.g)
      .where("voters.display_name", "=", "Bob")
      .executeTakeFirst();
    if (row) expect(row.weight).toBe(1);
  });
});
