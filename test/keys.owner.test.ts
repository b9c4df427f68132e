/**
 * Owner key routes (owner-api-v3.md, GET /keys, POST /keys/regenerate, Rule 7): KeyObject with
 * a 4-character hint, the whole key only in the 201, the old key refused with 401 invalid_key by
 * the very next request, including when the secret key regenerates itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { body, createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";
import { expectStatus } from "./support/owner-accounts.fixture.ts";

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const keysPath = (project: ImportedProject) => `/api/v3/projects/${project.slug}/admin/keys`;
const regenerate = (project: ImportedProject, key: string, input: unknown, headers: Record<string, string> = {}) =>
  ctx.send("POST", `${keysPath(project)}/regenerate`, key, input, headers);

async function expectInvalidKey(response: Response): Promise<void> {
  expect(response.status).toBe(401);
  expect((await body(response)).error.code).toBe("invalid_key");
}

describe("owner keys", () => {
  it("lists keys with their last 4 characters, never the key", async () => {
    const project = await ctx.importProject();
    const response = await ctx.get(keysPath(project), project.secretKey);
    const text = await response.clone().text();
    const envelope = await expectStatus(response, 200);
    expect(envelope.data).toEqual([
      { kind: "secret", hint: project.secretKey.slice(-4), created_at: expect.any(String) },
      { kind: "embed", hint: project.embedKey.slice(-4), created_at: expect.any(String) },
    ]);
    expect(envelope.meta).toMatchObject({ total: 2, page: 1 });
    expect(text).not.toContain(project.secretKey);
    expect(text).not.toContain(project.embedKey);
  });

  it('shows "" as the hint of a key stored without one', async () => {
    const project = await ctx.importProject();
    await ctx.db
      .updateTable("api_keys")
      .set({ hint: null })
      .where("project_id", "=", ctx.db.selectFrom("projects").select("id").where("slug", "=", project.slug))
      .where("kind", "=", "embed")
      .execute();
    const envelope = await expectStatus(await ctx.get(keysPath(project), project.secretKey), 200);
    expect(envelope.data[1]).toMatchObject({ kind: "embed", hint: "" });
  });

  it("regenerates the embed key: 201 with the whole key once, the old one answers 401 invalid_key at once", async () => {
    const project = await ctx.importProject();
    const board = `/api/v3/projects/${project.slug}`;
    expect((await ctx.get(board, project.embedKey)).status).toBe(200);
    const envelope = await expectStatus(await regenerate(project, project.secretKey, { kind: "embed" }), 201);
    const { key, hint, kind, created_at } = envelope.data;
    expect(kind).toBe("embed");
    expect(key).toMatch(/^fb_ek_[A-Za-z0-9_-]{43}$/);
    expect(hint).toBe(key.slice(-4));
    expect(Date.parse(created_at)).not.toBeNaN();
    await expectInvalidKey(await ctx.get(board, project.embedKey));
    expect((await ctx.get(board, key)).status).toBe(200);
    const list = await expectStatus(await ctx.get(keysPath(project), project.secretKey), 200);
    expect(list.data).toEqual([
      { kind: "secret", hint: project.secretKey.slice(-4), created_at: expect.any(String) },
      { kind: "embed", hint, created_at },
    ]);
    expect(JSON.stringify(list)).not.toContain(key);
    // The secret key is untouched.
    expect((await ctx.get(board, project.secretKey)).status).toBe(200);
  });

  it("regenerates the secret key with the secret key itself: the answer arrives, the old key is refused next", async () => {
    const project = await ctx.importProject();
    const envelope = await expectStatus(await regenerate(project, project.secretKey, { kind: "secret" }), 201);
    const fresh = envelope.data.key as string;
    expect(fresh).toMatch(/^fb_sk_[A-Za-z0-9_-]{43}$/);
    await expectInvalidKey(await ctx.get(keysPath(project), project.secretKey));
    await expectInvalidKey(await ctx.get(`/api/v3/projects/${project.slug}/features`, project.secretKey));
    const list = await expectStatus(await ctx.get(keysPath(project), fresh), 200);
    expect(list.data[0]).toMatchObject({ kind: "secret", hint: fresh.slice(-4) });
    expect((await ctx.get(`/api/v3/projects/${project.slug}/features`, project.embedKey)).status).toBe(200);
  });

  it("a replayed Idempotency-Key returns the same key and regenerates nothing", async () => {
    const project = await ctx.importProject();
    const first = await expectStatus(
      await regenerate(project, project.secretKey, { kind: "embed" }, { "Idempotency-Key": "regen-1" }),
      201,
    );
    const replay = await regenerate(project, project.secretKey, { kind: "embed" }, { "Idempotency-Key": "regen-1" });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("Idempotent-Replay")).toBe("true");
    expect((await body(replay)).data.key).toBe(first.data.key);
    expect((await ctx.get(`/api/v3/projects/${project.slug}`, first.data.key)).status).toBe(200);
  });

  it("answers 422 naming the field for a bad kind or an unknown field; keys unchanged", async () => {
    const project = await ctx.importProject();
    for (const [input, field] of [
      [{ kind: "master" }, "kind"],
      [{}, "kind"],
      [{ kind: "embed", key: "mine_mine_mine_mine_mine" }, "key"],
    ] as const) {
      const envelope = await expectStatus(await regenerate(project, project.secretKey, input), 422);
      expect(envelope.error).toMatchObject({ code: "validation_failed", field });
    }
    expect((await ctx.get(`/api/v3/projects/${project.slug}`, project.embedKey)).status).toBe(200);
  });
});
