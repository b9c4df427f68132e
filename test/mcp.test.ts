/**
 * The MCP endpoint driven by the official SDK's Client over real HTTP (engagement-api-v3.md,
 * "MCP endpoint"): initialize (name, version, tools capability, protocol 2025-06-18 or later),
 * tools/list with input schemas derived from the wrapped routes' own definitions (a route field
 * the tool lacks fails here), each tool's success with the write seen by the next public read,
 * isError results for the routes' refusals and for bad arguments naming the argument,
 * idempotency_key replay and mismatch, and an unknown tool as the JSON-RPC error -32602.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, ErrorCode, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runSession } from "../scripts/mcp-session.ts";
import type { OpenedDeps } from "../src/deps.ts";
import { createServer } from "../src/http-server.ts";
import { MCP_TOOLS } from "../src/routes/mcp/index.ts";
import {
  type Answer,
  body,
  createTestContext,
  type ImportedProject,
  type Json,
  type SnapshotParts,
  type TestContext,
} from "./support/harness.ts";
import { drainNotifications, importNotifyProject, notificationsOf, recipients, subscribe } from "./support/notifications.fixture.ts";

let ctx: TestContext;
let server: ReturnType<typeof createServer>;
let origin: string;

beforeAll(async () => {
  ctx = await createTestContext({ PORT: "0", HOST: "127.0.0.1", WEBHOOK_WORKER: "off" });
  // The test context closes the deps; the server's close is only counted.
  server = createServer({ ...ctx.deps, databaseCreated: false, close: vi.fn(async () => {}) } as OpenedDeps);
  const { port } = await server.start();
  origin = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await server.stop();
  await ctx.close();
});

const DAY = 24 * 60 * 60 * 1000;

function seed(): SnapshotParts {
  return {
    voters: [
      { ref: "boss", display_name: "Boss", role: "owner" },
      { ref: "a", display_name: "Ann" },
      { ref: "b", display_name: "Bo" },
      { ref: "c", display_name: "Cy" },
    ],
    features: [
      { ref: "dark", board: "roadmap", column: "c-open", heading: "Dark mode", description: "Easier on the eyes" },
      { ref: "dup", board: "roadmap", column: "c-open", heading: "Dark theme" },
      { ref: "export", board: "roadmap", column: "c-planned", heading: "Export to CSV" },
      { ref: "hidden", board: "roadmap", column: "c-open", heading: "Awaiting review", is_approved: false },
    ],
    votes: [
      { voter: "a", feature: "dark", created_at: "2026-11-01T00:00:00Z" },
      { voter: "b", feature: "dark", created_at: "2026-11-02T00:00:00Z" },
      { voter: "a", feature: "dup", created_at: "2026-11-03T00:00:00Z" },
      { voter: "c", feature: "dup", created_at: "2026-11-04T00:00:00Z" },
    ],
    comments: [{ ref: "k1", feature: "dark", voter: "a", content: "Please!", created_at: "2026-11-05T00:00:00Z" }],
    releases: [
      { ref: "draft", name: "2.0", slug: "2-0", published_at: null },
      { ref: "old", name: "1.0", slug: "1-0", published_at: new Date(Date.now() - 30 * DAY).toISOString() },
    ],
  };
}

/** An SDK client connected to `project`'s MCP endpoint with `headers` (default: the secret key as X-API-Key). */
async function connect(project: ImportedProject, headers: Record<string, string> = { "X-API-Key": project.secretKey }) {
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${origin}/api/v3/projects/${project.slug}/mcp`), {
    requestInit: { headers },
  });
  await client.connect(transport);
  return { client, transport };
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The text item of a result, parsed. */
function textOf(result: CallToolResult): Json {
  expect(result.content).toHaveLength(1);
  const [item] = result.content;
  if (item?.type !== "text") throw new Error("expected one text item");
  return JSON.parse(item.text);
}

function expectSuccess(result: CallToolResult): Json {
  expect(result.isError ?? false).toBe(false);
  return result.structuredContent;
}

function expectRefusal(result: CallToolResult, code: string, field: string | null = null) {
  expect(result.isError).toBe(true);
  const error = textOf(result);
  expect(error).toMatchObject({ code, field });
  expect(typeof error.message).toBe("string");
  return error;
}

const publicGet = async (project: ImportedProject, path: string) =>
  body(await ctx.get(`/api/v3/projects/${project.slug}${path}`, project.embedKey));
const adminGet = async (project: ImportedProject, path: string) =>
  body(await ctx.get(`/api/v3/projects/${project.slug}/admin${path}`, project.secretKey));

describe("initialize and tools/list", () => {
  it("initialize answers the server's name and version, the tools capability and protocol 2025-06-18 or later, with no session", async () => {
    const project = await ctx.importProject(seed());
    const { client, transport } = await connect(project);
    expect(client.getServerVersion()).toMatchObject({ name: "feedback-board", version: "3" });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(transport.protocolVersion && transport.protocolVersion >= "2025-06-18").toBe(true);
    expect(transport.sessionId).toBeUndefined();
    expect(client.getInstructions()).toContain("Test project");
    await client.close();
  });

  it("the key may also be sent as Authorization: Bearer", async () => {
    const project = await ctx.importProject(seed());
    const { client } = await connect(project, { Authorization: `Bearer ${project.secretKey}` });
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(0);
    await client.close();
  });

  it("tools/list lists the contract's tools with input schemas built from the wrapped routes' definitions", async () => {
    const project = await ctx.importProject(seed());
    const { client } = await connect(project);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining([
        "search_features",
        "get_feature",
        "find_similar_features",
        "list_events",
        "revenue_by_feature",
        "update_feature",
        "merge_features",
        "reply_as_team",
        "publish_release",
      ]),
    );
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    const search = byName.get("search_features") as Tool;
    expect(search.annotations?.readOnlyHint).toBe(true);
    // Array parameters are array arguments named without brackets.
    expect(search.inputSchema.properties?.status).toMatchObject({
      type: "array",
      items: { enum: expect.arrayContaining(["open", "planned"]) },
    });
    expect(search.inputSchema.properties?.tag).toMatchObject({ type: "array", items: { type: "integer" } });
    expect(Object.keys(byName.get("list_events")?.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["type", "after"]));
    expect(byName.get("list_events")?.inputSchema.properties?.type).toMatchObject({ type: "array" });
    const update = byName.get("update_feature") as Tool;
    expect(update.inputSchema.required).toEqual(["feature_id"]);
    expect(update.inputSchema.properties?.progress).toMatchObject({ anyOf: [{ minimum: 0, maximum: 100 }, { type: "null" }] });
    expect(update.inputSchema.properties?.idempotency_key).toMatchObject({ type: "string", maxLength: 200 });
    expect(byName.get("reply_as_team")?.inputSchema.required).toEqual(expect.arrayContaining(["feature_id", "content", "author_voter_id"]));
    expect(byName.get("merge_features")?.inputSchema.required).toEqual(["feature_id", "into_id"]);
    expect(byName.get("publish_release")?.inputSchema.required).toEqual(["release_id"]);
    expect(byName.get("get_feature")?.inputSchema).toMatchObject({ required: ["feature_id"], additionalProperties: false });
    for (const tool of tools) expect(JSON.stringify(tool.inputSchema)).not.toContain("$ref");
    await client.close();
  });

  it("every query parameter and body field of each wrapped route is an argument of its tool (or a declared exception)", async () => {
    const document = await body(await ctx.app.request("/api/v3/openapi.json"));
    const resolve = (schema: Json): Json =>
      schema?.$ref ? document.components.schemas[String(schema.$ref).replace("#/components/schemas/", "")] : schema;
    const project = await ctx.importProject(seed());
    const { client } = await connect(project);
    const listed = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool]));
    await client.close();
    expect(MCP_TOOLS.length).toBe(listed.size);
    for (const tool of MCP_TOOLS) {
      const operation = document.paths[`/api/v3${tool.wraps.path}`]?.[tool.wraps.method];
      expect(operation, `${tool.name} wraps ${tool.wraps.method} ${tool.wraps.path}`).toBeDefined();
      const routeFields = [
        ...(operation.parameters ?? []).filter((p: Json) => p.in === "query").map((p: Json) => String(p.name).replace(/\[\]$/, "")),
        ...Object.keys(resolve(operation.requestBody?.content?.["application/json"]?.schema)?.properties ?? {}),
      ];
      const pathParams = (operation.parameters ?? []).filter((p: Json) => p.in === "path" && p.name !== "slug").map((p: Json) => p.name);
      const properties = Object.keys(listed.get(tool.name)?.inputSchema.properties ?? {});
      const exceptions = Object.keys(tool.notArguments ?? {});
      for (const field of routeFields) {
        expect(properties.includes(field) || exceptions.includes(field), `${tool.name} lacks ${field} of ${tool.wraps.path}`).toBe(true);
      }
      for (const exception of exceptions) expect(routeFields, `${tool.name}: ${exception} is a field of the route`).toContain(exception);
      // Every path id has its argument, and the argument's schema is the parameter's.
      expect(Object.keys(tool.pathArguments).sort()).toEqual([...pathParams].sort());
      for (const [param, argument] of Object.entries(tool.pathArguments)) {
        const parameter = operation.parameters.find((p: Json) => p.in === "path" && p.name === param);
        const {
          description: _d,
          examples: _e,
          ...argumentSchema
        } = (listed.get(tool.name)?.inputSchema.properties?.[argument] ?? {}) as Json;
        const { description: _pd, example: _pe, ...parameterSchema } = parameter.schema;
        expect(argumentSchema).toEqual(parameterSchema);
      }
    }
  });
});

describe("tool calls", () => {
  it("search_features and get_feature read every feature, public or not, with the first page of comments", async () => {
    const project = await ctx.importProject(seed());
    const { ids } = project.ids;
    const { client } = await connect(project);
    const all = await call(client, "search_features", {});
    const listed = expectSuccess(all);
    expect(listed.meta).toMatchObject({ page: 1, total: 4 });
    expect(textOf(all)).toEqual(listed.items);
    const planned = expectSuccess(await call(client, "search_features", { status: ["planned", "done"], sort: "oldest" }));
    expect(planned.items.map((f: Json) => f.id)).toEqual([ids.features.export]);
    const awaiting = expectSuccess(await call(client, "search_features", { approved: false, per_page: 1 }));
    expect(awaiting.items.map((f: Json) => f.heading)).toEqual(["Awaiting review"]);

    const got = await call(client, "get_feature", { feature_id: ids.features.dark });
    const feature = expectSuccess(got);
    expect(textOf(got)).toEqual(feature);
    const admin = await adminGet(project, `/features/${ids.features.dark}`);
    const comments = await adminGet(project, `/comments?feature_id=${ids.features.dark}`);
    expect(feature).toEqual({ ...admin.data, comments: comments.data });
    expect(feature.comments.map((c: Json) => c.content)).toEqual(["Please!"]);
    // A feature the public does not see is there for the owner.
    expect(expectSuccess(await call(client, "get_feature", { feature_id: ids.features.hidden })).is_public).toBe(false);
    await client.close();
  });

  it("update_feature changes the feature through the owner PATCH: the next public read and the events feed show it", async () => {
    const project = await ctx.importProject(seed());
    const { ids } = project.ids;
    const { client } = await connect(project);
    const result = await call(client, "update_feature", {
      feature_id: ids.features.dark,
      heading: "  Dark mode everywhere ",
      status: "planned",
      developer_response: "Coming in 2.0",
    });
    const updated = expectSuccess(result);
    expect(updated).toMatchObject({ id: ids.features.dark, heading: "Dark mode everywhere", status: "planned" });
    const shown = await publicGet(project, `/features/${ids.features.dark}`);
    expect(shown.data).toMatchObject({ heading: "Dark mode everywhere", status: "planned", developer_response: "Coming in 2.0" });

    const events = expectSuccess(await call(client, "list_events", { type: ["feature.updated"] }));
    expect(events.items).toHaveLength(1);
    expect(events.items[0].data.object).toMatchObject({ id: ids.features.dark, heading: "Dark mode everywhere" });
    expect(events.items[0].data.changes).toMatchObject({ status: { from: "open", to: "planned" } });
    expect(events.meta).toMatchObject({ total: 1 });
    await client.close();
  });

  it("merge_features moves the votes; reply_as_team comments as the team; both seen by public reads", async () => {
    const project = await ctx.importProject(seed());
    const { ids } = project.ids;
    const { client } = await connect(project);
    const merged = expectSuccess(await call(client, "merge_features", { feature_id: ids.features.dup, into_id: ids.features.dark }));
    expect(merged).toMatchObject({ id: ids.features.dark, vote_count: 3 });
    expect((await publicGet(project, `/features/${ids.features.dark}`)).data.vote_count).toBe(3);
    expect((await adminGet(project, `/features/${ids.features.dup}`)).data.merged_into).toMatchObject({ id: ids.features.dark });

    const reply = expectSuccess(
      await call(client, "reply_as_team", { feature_id: ids.features.dark, content: "On it!", author_voter_id: ids.voters.boss }),
    );
    expect(reply).toMatchObject({ content: "On it!", author_role: "owner", feature_id: ids.features.dark });
    const threaded = expectSuccess(
      await call(client, "reply_as_team", {
        feature_id: ids.features.dark,
        content: "Thanks Ann",
        author_voter_id: ids.voters.boss,
        parent_id: ids.comments.k1,
      }),
    );
    expect(threaded.parent_id).toBe(ids.comments.k1);
    const thread = await publicGet(project, `/features/${ids.features.dark}/comments`);
    expect(thread.data.map((c: Json) => c.content)).toEqual(expect.arrayContaining(["On it!", "Please!"]));
    const parent = thread.data.find((c: Json) => c.id === ids.comments.k1);
    expect(parent.replies.map((c: Json) => c.content)).toEqual(["Thanks Ann"]);
    await client.close();
  });

  it("publish_release publishes a draft now (public changelog shows it); an already public release is returned unchanged", async () => {
    const project = await ctx.importProject(seed());
    const { ids } = project.ids;
    const { client } = await connect(project);
    const before = await publicGet(project, "/changelog");
    expect(before.data.map((r: Json) => r.name)).toEqual(["1.0"]);
    const published = expectSuccess(await call(client, "publish_release", { release_id: ids.releases.draft }));
    expect(published).toMatchObject({ id: ids.releases.draft, status: "published" });
    expect(Math.abs(Date.parse(published.published_at) - Date.now())).toBeLessThan(60_000);
    expect((await publicGet(project, "/changelog")).data.map((r: Json) => r.name)).toEqual(["2.0", "1.0"]);

    const again = expectSuccess(await call(client, "publish_release", { release_id: ids.releases.draft }));
    expect(again).toEqual(published);
    const old = await adminGet(project, `/releases/${ids.releases.old}`);
    expect(expectSuccess(await call(client, "publish_release", { release_id: ids.releases.old }))).toEqual(old.data);
    const events = await adminGet(project, "/events?type=release.published");
    expect(events.data).toHaveLength(1);
    await client.close();
  });

  it("revenue_by_feature answers the revenue list with its meta", async () => {
    const project = await ctx.importProject(seed());
    const { client } = await connect(project);
    const result = expectSuccess(await call(client, "revenue_by_feature", { sort: "votes", per_page: 2 }));
    const route = await body<Answer<"/api/v3/projects/{slug}/revenue/features", "get">>(
      await ctx.get(`/api/v3/projects/${project.slug}/revenue/features?sort=votes&per_page=2`, project.secretKey),
    );
    expect(result).toEqual({ items: route.data, meta: route.meta });
    await client.close();
  });
});

describe("find_similar_features", () => {
  it("by feature_id answers the owner's merge candidates route; by q the same rule applied to the text", async () => {
    const base = seed();
    const features = [...(base.features as Json[]), { ref: "dark2", board: "roadmap", column: "c-open", heading: "Dark modes please" }];
    const project = await ctx.importProject({ ...base, features });
    const { ids } = project.ids;
    const { client } = await connect(project);
    const byFeature = await call(client, "find_similar_features", { feature_id: ids.features.dark, limit: 3 });
    const route = await adminGet(project, `/features/${ids.features.dark}/similar?limit=3`);
    expect(expectSuccess(byFeature)).toEqual({ items: route.data, meta: null });
    expect(textOf(byFeature)).toEqual(route.data);
    expect(route.data.map((f: Json) => f.id)).toContain(ids.features.dark2);
    expect(route.data.map((f: Json) => f.id)).not.toContain(ids.features.dark);

    const byText = expectSuccess(await call(client, "find_similar_features", { q: "  dark MODE! " }));
    expect(byText.meta).toBeNull();
    expect(byText.items[0]).toMatchObject({ id: ids.features.dark, heading: "Dark mode", similarity: 1, is_public: true });
    expect(byText.items.map((f: Json) => f.id)).toContain(ids.features.dark2);
    for (const item of byText.items) expect(item.similarity).toBeGreaterThanOrEqual(0.3);
    // The owner's rule: features the public does not see are candidates too.
    const hidden = expectSuccess(await call(client, "find_similar_features", { q: "Awaiting review" }));
    expect(hidden.items[0]).toMatchObject({ id: ids.features.hidden, is_public: false });
    await client.close();
  });

  it("both or neither of q and feature_id is validation_failed naming q; an unknown feature is not_found", async () => {
    const project = await ctx.importProject(seed());
    const { ids } = project.ids;
    const { client } = await connect(project);
    expectRefusal(await call(client, "find_similar_features", {}), "validation_failed", "q");
    expectRefusal(await call(client, "find_similar_features", { limit: 3 }), "validation_failed", "q");
    expectRefusal(await call(client, "find_similar_features", { q: "dark", feature_id: ids.features.dark }), "validation_failed", "q");
    expectRefusal(await call(client, "find_similar_features", { q: "   " }), "validation_failed", "q");
    expectRefusal(await call(client, "find_similar_features", { q: "dark", limit: 21 }), "validation_failed", "limit");
    expectRefusal(await call(client, "find_similar_features", { feature_id: 2147483000 }), "not_found");
    await client.close();
  });
});

describe("notifications", () => {
  it("tool calls notify the subscribers as the wrapped routes do (status change, team comment, merge)", async () => {
    const project = await importNotifyProject(ctx);
    const { ada, bob, dan } = project.voters;
    const { f1, f2, dup } = project.features as Record<string, number>;
    await subscribe(ctx.db, project, f1 as number, [ada, bob]);
    await subscribe(ctx.db, project, dup as number, [dan]);
    const { client } = await connect(project);
    expectSuccess(await call(client, "update_feature", { feature_id: f1, status: "in_progress" }));
    // Consumed before the reply: commenting subscribes its author (who would then be told too).
    await drainNotifications(ctx.db, project.id);
    expectSuccess(
      await call(client, "reply_as_team", { feature_id: f1, content: "Started this week", author_voter_id: project.ids.ids.voters.olga }),
    );
    expectSuccess(await call(client, "merge_features", { feature_id: dup, into_id: f2 }));
    await drainNotifications(ctx.db, project.id);
    const rows = await notificationsOf(ctx.db, project.id);
    expect(recipients(project, rows, "status_changed")).toEqual(["ada", "bob"]);
    expect(
      rows
        .filter((row) => row.type !== "status_changed")
        .map((row) => row.type)
        .sort(),
    ).toEqual(["merged", "team_commented", "team_commented"]);
    expect(recipients(project, rows, "team_commented")).toEqual(["ada", "bob"]);
    expect(recipients(project, rows, "merged")).toEqual(["dan"]);
    await client.close();
  });
});

describe("refusals", () => {
  it("a refusal of the wrapped route is an isError result holding the error object; nothing changes", async () => {
    const project = await ctx.importProject(seed());
    const { ids } = project.ids;
    const { client } = await connect(project);
    expectRefusal(await call(client, "get_feature", { feature_id: 2147483000 }), "not_found");
    expectRefusal(await call(client, "merge_features", { feature_id: ids.features.dark, into_id: ids.features.dark }), "already_exists");
    expectRefusal(
      await call(client, "reply_as_team", { feature_id: ids.features.dark, content: "Hi", author_voter_id: ids.voters.a }),
      "validation_failed",
      "author_voter_id",
    );
    expectRefusal(await call(client, "publish_release", { release_id: 2147483000 }), "not_found");
    expectRefusal(await call(client, "search_features", { board: "nope" }), "validation_failed", "board");
    expect((await adminGet(project, "/events")).data).toEqual([]);
    expect((await publicGet(project, `/features/${ids.features.dark}/comments`)).data).toHaveLength(1);
    await client.close();
  });

  it("invalid arguments are validation_failed naming the argument, and change nothing", async () => {
    const project = await ctx.importProject(seed());
    const { ids } = project.ids;
    const { client } = await connect(project);
    const dark = ids.features.dark;
    expectRefusal(await call(client, "update_feature", { feature_id: dark, progress: 200 }), "validation_failed", "progress");
    expectRefusal(await call(client, "update_feature", { feature_id: dark, colour: "red" }), "validation_failed", "colour");
    expectRefusal(await call(client, "update_feature", { heading: "x" }), "validation_failed", "feature_id");
    expectRefusal(await call(client, "update_feature", { feature_id: "dark" }), "validation_failed", "feature_id");
    expectRefusal(await call(client, "update_feature", { feature_id: dark, tag_ids: [0] }), "validation_failed", "tag_ids[0]");
    expectRefusal(await call(client, "search_features", { status: ["nope"] }), "validation_failed", "status");
    expectRefusal(await call(client, "list_events", { after: "evt_x" }), "validation_failed", "after");
    expectRefusal(await call(client, "revenue_by_feature", { per_page: 101 }), "validation_failed", "per_page");
    expectRefusal(
      await call(client, "reply_as_team", { feature_id: dark, content: "  ", author_voter_id: ids.voters.boss }),
      "validation_failed",
      "content",
    );
    expectRefusal(
      await call(client, "publish_release", { release_id: ids.releases.draft, idempotency_key: "" }),
      "validation_failed",
      "idempotency_key",
    );
    expect((await adminGet(project, "/events")).data).toEqual([]);
    expect((await adminGet(project, `/releases/${ids.releases.draft}`)).data.status).toBe("draft");
    await client.close();
  });

  it("an unknown tool is the JSON-RPC error -32602", async () => {
    const project = await ctx.importProject(seed());
    const { client } = await connect(project);
    const error = await client.callTool({ name: "drop_database", arguments: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    await client.close();
  });
});

describe("idempotency_key", () => {
  it("the same key and tool returns the first result and changes nothing; the same key with another tool is idempotency_mismatch", async () => {
    const project = await ctx.importProject(seed());
    const { ids } = project.ids;
    const { client } = await connect(project);
    const args = { feature_id: ids.features.dup, into_id: ids.features.dark, idempotency_key: "merge-dup" };
    const first = await call(client, "merge_features", args);
    expectSuccess(first);
    // A second merge would be refused (already merged): the replay is the first result.
    const replay = await call(client, "merge_features", args);
    expect(replay.structuredContent).toEqual(first.structuredContent);
    expect(replay.content).toEqual(first.content);
    expect(replay._meta).toMatchObject({ idempotent_replay: true });
    const merges = await adminGet(project, "/events?type=feature.merged");
    expect(merges.data).toHaveLength(1);

    const mismatch = await call(client, "update_feature", { feature_id: ids.features.dark, heading: "X", idempotency_key: "merge-dup" });
    expectRefusal(mismatch, "idempotency_mismatch", "idempotency_key");
    const otherArgs = await call(client, "merge_features", { ...args, into_id: ids.features.export });
    expectRefusal(otherArgs, "idempotency_mismatch", "idempotency_key");
    expect((await publicGet(project, `/features/${ids.features.dark}`)).data.heading).toBe("Dark mode");

    // Publishing twice with one key: one publication, the first result.
    const p1 = await call(client, "publish_release", { release_id: ids.releases.draft, idempotency_key: "pub-2" });
    const p2 = await call(client, "publish_release", { release_id: ids.releases.draft, idempotency_key: "pub-2" });
    expect(p2.structuredContent).toEqual(p1.structuredContent);
    expect((await adminGet(project, "/events?type=release.published")).data).toHaveLength(1);
    // Keys are the project's: another project may use the same key.
    const other = await ctx.importProject(seed());
    const { client: otherClient } = await connect(other);
    expectSuccess(await call(otherClient, "publish_release", { release_id: other.ids.ids.releases.draft, idempotency_key: "pub-2" }));
    await otherClient.close();
    await client.close();
  });
});

describe("scripts/mcp-session.ts", () => {
  it("runs initialize, tools/list, search_features and get_feature with the SDK client, and changes nothing", async () => {
    const project = await ctx.importProject(seed());
    const lines: string[] = [];
    const report = await runSession(`${origin}/api/v3/projects/${project.slug}/mcp`, project.secretKey, "dark", (line) => lines.push(line));
    expect(report.server).toMatchObject({ name: "feedback-board" });
    expect(report.tools).toContain("get_feature");
    expect(report.found.items.map((f) => f.heading).sort()).toEqual(["Dark mode", "Dark theme"]);
    expect(report.feature).toMatchObject({ id: report.found.items[0]?.id, heading: report.found.items[0]?.heading });
    expect(lines[0]).toMatch(/^initialize: feedback-board 3, protocol 20\d\d-/);
    expect((await adminGet(project, "/events")).data).toEqual([]);
    await expect(runSession(`${origin}/api/v3/projects/${project.slug}/mcp`, project.embedKey, "dark")).rejects.toThrow();
  });
});
