/**
 * Owner accounts changes across two instances (owner-api-v3.md, "Common rules", Rules 6-8): two
 * server processes on one Postgres and one Redis. Each scenario first makes instance B cache what
 * the change affects (key lookup with settings, anonymous voter, read-cache answers), then makes
 * the change through instance A, then demands the change from B's very next request: settings,
 * a ban, key regeneration (embed and secret), a tier change, a voter's erasure.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ImportedProject, Json } from "../support/harness.ts";
import { type AccountsTokens, accountsSnapshot } from "../support/owner-accounts.fixture.ts";
import { json, send } from "./support/http.ts";
import { type ServerInstance, startServer } from "./support/server.ts";
import { type Stack, startStack } from "./support/stack.ts";

let stack: Stack;
let a: ServerInstance;
let b: ServerInstance;

beforeAll(async () => {
  stack = await startStack();
  a = stack.server;
  b = await startServer(stack.env);
});
afterAll(async () => {
  await b?.stop().catch(() => {});
  await stack?.close();
});

async function seed(): Promise<{ project: ImportedProject; ids: Json; tokens: AccountsTokens }> {
  const { overrides, tokens } = accountsSnapshot();
  const project = await stack.seeder.importProject(overrides);
  return { project, ids: project.ids.ids, tokens };
}

async function call(
  server: ServerInstance,
  method: string,
  path: string,
  key: string,
  input?: unknown,
  headers: Record<string, string> = {},
) {
  const result = await send(server.origin, {
    method,
    path: `/api/v3${path}`,
    headers: { "X-API-Key": key, ...headers },
    body: input === undefined ? undefined : JSON.stringify(input),
  });
  return { status: result.status, envelope: json(result) as Json };
}

function expectOk(result: { status: number; envelope: Json }, status = 200): Json {
  expect(result.status, JSON.stringify(result.envelope)).toBe(status);
  return result.envelope;
}

describe("owner accounts changes through A, seen by B's very next request", () => {
  it("settings: display settings, project name and privacy", async () => {
    const { project, ids } = await seed();
    const f1 = async () =>
      expectOk(await call(b, "GET", `/projects/${project.slug}/features`, project.embedKey)).data.find(
        (f: Json) => f.id === ids.features.f1,
      );
    expect((await f1()).vote_count).toBe(3);
    expectOk(await call(b, "GET", `/projects/${project.slug}`, project.embedKey));
    expectOk(
      await call(a, "PATCH", `/projects/${project.slug}/admin/settings`, project.secretKey, {
        name: "Changed on A",
        settings: { show_votes: false },
      }),
    );
    expect((await f1()).vote_count).toBeNull();
    expect(expectOk(await call(b, "GET", `/projects/${project.slug}`, project.embedKey)).data.project.name).toBe("Changed on A");
    expectOk(await call(a, "PATCH", `/projects/${project.slug}/admin/settings`, project.secretKey, { is_private: true }));
    expect((await call(b, "GET", `/projects/${project.slug}/features`, project.embedKey)).status).toBe(404);
  });

  it("a ban holds on the voter's next write on B", async () => {
    const { project, ids, tokens } = await seed();
    const comment = () =>
      call(
        b,
        "POST",
        `/projects/${project.slug}/features/${ids.features.f2}/comments`,
        project.secretKey,
        { content: "from B" },
        { "X-VF-Anon": tokens.ada },
      );
    expectOk(await comment(), 201);
    expectOk(await call(a, "PATCH", `/projects/${project.slug}/admin/voters/${ids.voters.ada}`, project.secretKey, { banned: true }));
    const refused = await comment();
    expect(refused.status).toBe(403);
    expect(refused.envelope.error.code).toBe("voter_banned");
  });

  it("key regeneration: B refuses the old embed key and the old secret key at once", async () => {
    const { project } = await seed();
    expectOk(await call(b, "GET", `/projects/${project.slug}`, project.embedKey));
    expectOk(await call(b, "GET", `/projects/${project.slug}/admin/keys`, project.secretKey));
    const embed = expectOk(
      await call(a, "POST", `/projects/${project.slug}/admin/keys/regenerate`, project.secretKey, { kind: "embed" }),
      201,
    );
    const oldEmbed = await call(b, "GET", `/projects/${project.slug}`, project.embedKey);
    expect([oldEmbed.status, oldEmbed.envelope.error?.code]).toEqual([401, "invalid_key"]);
    expectOk(await call(b, "GET", `/projects/${project.slug}`, embed.data.key));
    const secret = expectOk(
      await call(a, "POST", `/projects/${project.slug}/admin/keys/regenerate`, project.secretKey, { kind: "secret" }),
      201,
    );
    const oldSecret = await call(b, "GET", `/projects/${project.slug}/admin/keys`, project.secretKey);
    expect([oldSecret.status, oldSecret.envelope.error?.code]).toEqual([401, "invalid_key"]);
    expectOk(await call(b, "GET", `/projects/${project.slug}/admin/keys`, secret.data.key));
  });

  it("tier and voter billing changes: B's revenue figures follow at once", async () => {
    const { project, ids } = await seed();
    const f1 = async () =>
      expectOk(await call(b, "GET", `/projects/${project.slug}/revenue/features?sort=votes`, project.secretKey)).data.find(
        (f: Json) => f.id === ids.features.f1,
      );
    expect(await f1()).toMatchObject({ weighted_votes: 9, mrr_cents: 24800 });
    expectOk(
      await call(a, "PATCH", `/projects/${project.slug}/admin/tiers/${ids.tiers.pro}`, project.secretKey, {
        multiplier: 7,
        mrr_cents: 100,
      }),
    );
    expect(await f1()).toMatchObject({ weighted_votes: 7 + 5 + 1, mrr_cents: 100 + 19900 });
    expectOk(await call(a, "PATCH", `/projects/${project.slug}/admin/voters/${ids.voters.bob}`, project.secretKey, { churned: true }));
    expect(await f1()).toMatchObject({ mrr_cents: 100, churned_voters: 1 });
    expectOk(await call(a, "DELETE", `/projects/${project.slug}/admin/tiers/${ids.tiers.pro}`, project.secretKey));
    expect(await f1()).toMatchObject({ weighted_votes: 1 + 5 + 1, paying_voters: 1 });
  });

  it("voter erasure: B refuses the erased voter's token and shows the counts without it", async () => {
    const { project, ids, tokens } = await seed();
    const read = () =>
      call(b, "GET", `/projects/${project.slug}/features/${ids.features.f1}`, project.secretKey, undefined, { "X-VF-Anon": tokens.ada });
    const before = expectOk(await read());
    expect(before.data).toMatchObject({ vote_count: 3, has_voted: true, comment_count: 3 });
    expectOk(await call(a, "DELETE", `/projects/${project.slug}/admin/voters/${ids.voters.ada}`, project.secretKey));
    const refused = await read();
    expect([refused.status, refused.envelope.error?.code]).toEqual([401, "identity_invalid"]);
    const after = expectOk(await call(b, "GET", `/projects/${project.slug}/features/${ids.features.f1}`, project.secretKey));
    expect(after.data).toMatchObject({ vote_count: 2, comment_count: 0 });
    const board = expectOk(await call(b, "GET", `/projects/${project.slug}`, project.secretKey));
    expect(board.data.project.voter_count).toBe(3);
  });
});
