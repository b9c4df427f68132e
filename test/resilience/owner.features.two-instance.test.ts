/**
 * Owner feature changes through one instance are seen by the other on the very next request
 * (owner-api-v3.md, "Common rules": every change is visible to every public read that starts
 * after the owner's response, on every instance). Two server processes on one Postgres and one
 * Redis; instance B's public answers are read (and cached) before each change made through A.
 * The same holds for the MCP endpoint's tool calls (engagement-api-v3.md, "MCP endpoint": they run
 * through the routes they wrap), and an idempotency_key used on A is replayed on B.
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

  it("MCP tool calls through A are seen by B's very next public read; an idempotency_key replays across instances", async () => {
    const { voters } = anonVoters(2);
    const project = await stack.seeder.importProject({
      voters: [...voters, { ref: "boss", display_name: "Boss", role: "owner" }],
      features: openFeatures(3),
      votes: [
        { voter: "v0", feature: "f0" },
        { voter: "v1", feature: "f1" },
      ],
      releases: [{ ref: "draft", name: "2.0", slug: "2-0", published_at: null }],
    });
    const ids = idsOf(project);
    const key = { "X-API-Key": project.secretKey };
    const pub = `/api/v3/projects/${project.slug}`;
    const onB = async (path: string) => json(await send(b.origin, { path, headers: key })).data;
    let id = 0;
    const tool = async (origin: string, name: string, args: Record<string, unknown>) => {
      const result = await send(origin, {
        method: "POST",
        path: `${pub}/mcp`,
        headers: {
          Authorization: `Bearer ${project.secretKey}`,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name, arguments: args } }),
      });
      expect(result.status, result.text).toBe(200);
      const answer = json(result);
      expect(answer.result?.isError ?? false, result.text).toBe(false);
      return answer.result;
    };
    const a = stack.server.origin;

    // update_feature: B read (and cached) the feature, then shows the change.
    expect((await onB(`${pub}/features/${ids.features.f2}`)).status).toBe("open");
    expect((await onB(`${pub}/features/${ids.features.f2}`)).status).toBe("open");
    await tool(a, "update_feature", { feature_id: ids.features.f2, status: "planned", heading: "Renamed through MCP" });
    expect(await onB(`${pub}/features/${ids.features.f2}`)).toMatchObject({ status: "planned", heading: "Renamed through MCP" });

    // merge_features with a key, then the same call on B: a replay, the votes moved once.
    expect((await onB(`${pub}/features/${ids.features.f0}`)).vote_count).toBe(1);
    const merge = { feature_id: ids.features.f1, into_id: ids.features.f0, idempotency_key: "two-instance-merge" };
    const first = await tool(a, "merge_features", merge);
    expect((await onB(`${pub}/features/${ids.features.f0}`)).vote_count).toBe(2);
    const replay = await tool(b.origin, "merge_features", merge);
    expect(replay._meta).toMatchObject({ idempotent_replay: true });
    expect(replay.structuredContent).toEqual(first.structuredContent);
    expect((await onB(`${pub}/features/${ids.features.f0}`)).vote_count).toBe(2);
    const merges = (await onB(`${pub}/admin/events?type=feature.merged`)) as unknown[];
    expect(merges).toHaveLength(1);

    // reply_as_team and publish_release.
    expect(await onB(`${pub}/features/${ids.features.f0}/comments`)).toEqual([]);
    await tool(a, "reply_as_team", { feature_id: ids.features.f0, content: "On our list", author_voter_id: ids.voters.boss });
    expect((await onB(`${pub}/features/${ids.features.f0}/comments`)).map((c: { content: string }) => c.content)).toEqual(["On our list"]);
    expect(await onB(`${pub}/changelog`)).toEqual([]);
    await tool(a, "publish_release", { release_id: ids.releases.draft });
    expect((await onB(`${pub}/changelog`)).map((r: { name: string }) => r.name)).toEqual(["2.0"]);
  }, 60_000);
});
