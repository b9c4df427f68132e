/**
 * Owner feature changes through one instance are seen by the other on the very next request
 * (owner-api-v3.md, "Common rules": every change is visible to every public read that starts
 * after the owner's response, on every instance). Two server processes on one Postgres and one
 * Redis; instance B's public answers are read (and cached) before each change made through A.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, send } from "./support/http.ts";
import { anonVoters, idsOf, openFeatures } from "./support/seed.ts";
import { type ServerInstance, startServer } from "./support/server.ts";
import { type Stack, startStack } from "./support/stack.ts";

let stack: Stack;
let b: ServerInstance;

beforeAll(async () => {
  stack = await startStack();
  b = await startServer(stack.env);
}, 120_000);
afterAll(async () => {
  await b?.stop();
  await stack?.close();
});

describe("owner changes through instance A, public reads through instance B", () => {
  it("approval, status change, merge and deletion show on B's very next read", async () => {
    const { voters } = anonVoters(3);
    const project = await stack.seeder.importProject({
      voters,
      features: [...openFeatures(3), { ref: "wait", board: "roadmap", column: "c-open", heading: "Awaiting review", is_approved: false }],
      votes: [
        { voter: "v0", feature: "f0" },
        { voter: "v1", feature: "f0" },
        { voter: "v2", feature: "f1" },
      ],
    });
    const ids = idsOf(project);
    const key = { "X-API-Key": project.secretKey };
    const a = stack.server.origin;
    const pub = `/api/v3/projects/${project.slug}`;
    const admin = `${pub}/admin`;
    const onB = async (path: string) => {
      const result = await send(b.origin, { path, headers: key });
      return { status: result.status, body: json(result) };
    };
    const onA = async (method: string, path: string, body?: unknown) => {
      const result = await send(a, {
        method,
        path: `${admin}${path}`,
        headers: { ...key, "Content-Type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      expect(result.status, result.text).toBeLessThan(300);
      return json(result);
    };
    const listedOnB = async () => (await onB(`${pub}/features?sort=new`)).body.data.map((f: { id: number }) => f.id);

    // Approval: B served the list without the suggestion (twice: cached), then lists it.
    expect(await listedOnB()).not.toContain(ids.features.wait);
    expect(await listedOnB()).not.toContain(ids.features.wait);
    await onA("PATCH", `/features/${ids.features.wait}`, { is_approved: true });
    expect(await listedOnB()).toContain(ids.features.wait);

    // Status change.
    expect((await onB(`${pub}/features/${ids.features.f2}`)).body.data.status).toBe("open");
    await onA("PATCH", `/features/${ids.features.f2}`, { status: "in_progress" });
    expect((await onB(`${pub}/features/${ids.features.f2}`)).body.data.status).toBe("in_progress");

    // Merge: f1 into f0; the board document's voter count stays 3.
    expect((await onB(`${pub}/features/${ids.features.f0}`)).body.data.vote_count).toBe(2);
    await onA("POST", `/features/${ids.features.f1}/merge`, { into_id: ids.features.f0 });
    expect((await onB(`${pub}/features/${ids.features.f0}`)).body.data.vote_count).toBe(3);
    expect(await listedOnB()).not.toContain(ids.features.f1);
    expect((await onB(pub)).body.data.project.voter_count).toBe(3);

    // Deletion: f0 (holding every vote) goes; B answers 404 and the voter count drops to 0.
    expect((await onB(`${pub}/features/${ids.features.wait}`)).status).toBe(200);
    await onA("DELETE", `/features/${ids.features.f0}`);
    expect((await onB(`${pub}/features/${ids.features.f0}`)).status).toBe(404);
    expect(await listedOnB()).not.toContain(ids.features.f0);
    expect((await onB(pub)).body.data.project.voter_count).toBe(0);
  }, 60_000);
});
