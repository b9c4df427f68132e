/**
 * The bundled demo's published keys (src/admin/demo.ts) are served on loopback only (README,
 * "Container image"): with HOST off loopback a request with one answers 401 invalid_key, and the
 * start-up replacement swaps them for random keys, once, in the project that holds them.
 * DEMO=public is the one explicit way to keep them on any interface.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_EMBED_KEY, DEMO_SECRET_KEY } from "../src/admin/demo.ts";
import { replaceWellKnownDemoKeys } from "../src/admin/demo-bootstrap.ts";
import { isLoopbackHost, wellKnownDemoKeysAllowed } from "../src/lib/rules/published-demo-keys.ts";
import { hashSecret } from "../src/lib/rules/secrets.ts";
import { createTestContext, type TestContext } from "./support/harness.ts";

let loopback: TestContext;
let exposed: TestContext;
let sandbox: TestContext;
let slug: string;

beforeAll(async () => {
  [loopback, exposed, sandbox] = await Promise.all([
    createTestContext({ HOST: "127.0.0.1" }),
    createTestContext({ HOST: "0.0.0.0" }),
    createTestContext({ HOST: "0.0.0.0", DEMO: "public" }),
  ]);
  // A project holding the published keys, as the demo does (no other test holds them).
  ({ slug } = await loopback.importProject({
    keys: [
      { kind: "secret", key: DEMO_SECRET_KEY },
      { kind: "embed", key: DEMO_EMBED_KEY },
    ],
  }));
});
afterAll(async () => {
  await loopback?.db.deleteFrom("projects").where("slug", "=", slug).execute();
  await Promise.all([loopback?.close(), exposed?.close(), sandbox?.close()]);
});

describe("the demo's published keys", () => {
  it("count as loopback only for localhost, 127.0.0.0/8 and ::1", () => {
    for (const host of ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]", "::ffff:127.0.0.1"])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ["0.0.0.0", "::", "10.0.0.5", "192.168.1.20", "2001:db8::1", "example.com", ""])
      expect(isLoopbackHost(host), host).toBe(false);
    expect(wellKnownDemoKeysAllowed({ HOST: "0.0.0.0", DEMO: "auto" })).toBe(false);
    expect(wellKnownDemoKeysAllowed({ HOST: "0.0.0.0", DEMO: "off" })).toBe(false);
    expect(wellKnownDemoKeysAllowed({ HOST: "0.0.0.0", DEMO: "public" })).toBe(true);
    expect(wellKnownDemoKeysAllowed({ HOST: "127.0.0.1", DEMO: "auto" })).toBe(true);
  });

  it("answer 401 invalid_key on a server whose HOST is off loopback, unless DEMO=public", async () => {
    for (const key of [DEMO_SECRET_KEY, DEMO_EMBED_KEY]) {
      expect((await loopback.get(`/api/v3/projects/${slug}`, key)).status).toBe(200);
      const refused = await exposed.get(`/api/v3/projects/${slug}`, key);
      expect(refused.status).toBe(401);
      expect((await refused.json()).error.code).toBe("invalid_key");
      expect((await sandbox.get(`/api/v3/projects/${slug}`, key)).status).toBe(200);
    }
    // The owner routes, what the published secret key would hand over.
    expect((await exposed.get(`/api/v3/projects/${slug}/admin/keys`, DEMO_SECRET_KEY)).status).toBe(401);
  });

  it("are replaced by random keys, once, in the project holding them", async () => {
    const [replaced, ...others] = await replaceWellKnownDemoKeys(loopback.db);
    expect(others.filter((project) => project.slug === slug)).toEqual([]);
    expect(replaced).toMatchObject({ slug, secretKey: expect.stringMatching(/^fb_sk_/), embedKey: expect.stringMatching(/^fb_ek_/) });
    expect(replaced!.secretKey).not.toBe(DEMO_SECRET_KEY);
    const digests = await loopback.db
      .selectFrom("api_keys")
      .select("key_hash")
      .where("key_hash", "in", [hashSecret(DEMO_SECRET_KEY), hashSecret(DEMO_EMBED_KEY)])
      .execute();
    expect(digests).toEqual([]);
    expect((await exposed.get(`/api/v3/projects/${slug}`, replaced!.secretKey)).status).toBe(200);
    expect((await exposed.get(`/api/v3/projects/${slug}/admin/keys`, replaced!.secretKey)).status).toBe(200);
    expect((await loopback.get(`/api/v3/projects/${slug}`, DEMO_SECRET_KEY)).status).toBe(401);
    expect(await replaceWellKnownDemoKeys(loopback.db)).toEqual([]);
  });
});
