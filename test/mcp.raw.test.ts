/**
 * The MCP endpoint as a client without the SDK sees it (engagement-api-v3.md, "MCP endpoint"):
 * raw JSON-RPC POSTs with `Accept: application/json, text/event-stream`, stateless (no session,
 * no initialize needed first); malformed messages answered by JSON-RPC errors; GET 405; key
 * refusals as the JSON envelope (missing, invalid, embed, another project's); rate headers on
 * every answer to a request carrying a valid key of the project (the embed key's 403 and a
 * GET's 405 included), initialize and tools/list counted as reads and a tool call
 * once against its wrapped route's budget; refused calls change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { body, createTestContext, type ImportedProject, type Json, type SnapshotParts, type TestContext } from "./support/harness.ts";

const READS = 1000;
const WRITES = 4;
const EMBED_READS = 700;
const EMBED_WRITES = 70;

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({
    RATE_LIMIT_READS_PER_MINUTE: String(READS),
    RATE_LIMIT_WRITES_PER_MINUTE: String(WRITES),
    RATE_LIMIT_EMBED_READS_PER_MINUTE: String(EMBED_READS),
    RATE_LIMIT_EMBED_WRITES_PER_MINUTE: String(EMBED_WRITES),
  });
});
afterAll(() => ctx.close());

function seed(): SnapshotParts {
  return {
    voters: [
      { ref: "boss", display_name: "Boss", role: "owner" },
      { ref: "a", display_name: "Ann" },
    ],
    features: [
      { ref: "dark", board: "roadmap", column: "c-open", heading: "Dark mode" },
      { ref: "dup", board: "roadmap", column: "c-open", heading: "Dark theme" },
    ],
    votes: [{ voter: "a", feature: "dup", created_at: "2026-11-03T00:00:00Z" }],
    comments: [{ ref: "k1", feature: "dark", voter: "a", content: "Please!", created_at: "2026-11-05T00:00:00Z" }],
  };
}

const STREAMABLE = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
let nextId = 1;

/** POSTs `message` (JSON, or a raw string) to `project`'s MCP endpoint. */
function post(project: ImportedProject, message: unknown, headers: Record<string, string> = { "X-API-Key": project.secretKey }) {
  return ctx.app.request(`/api/v3/projects/${project.slug}/mcp`, {
    method: "POST",
    headers: { ...STREAMABLE, ...headers },
    body: typeof message === "string" ? message : JSON.stringify(message),
  });
}

const request = (method: string, params?: unknown) => ({
  jsonrpc: "2.0",
  id: nextId++,
  method,
  ...(params === undefined ? {} : { params }),
});
const toolCall = (name: string, args: Record<string, unknown>) => request("tools/call", { name, arguments: args });

function rate(response: Response) {
  return {
    limit: Number(response.headers.get("X-RateLimit-Limit")),
    remaining: Number(response.headers.get("X-RateLimit-Remaining")),
    reset: Number(response.headers.get("X-RateLimit-Reset")),
  };
}

function expectRateHeaders(response: Response, limit: number) {
  expect(response.headers.get("X-RateLimit-Limit")).toBe(String(limit));
  expect(response.headers.get("X-RateLimit-Remaining")).toMatch(/^\d+$/);
  expect(response.headers.get("X-RateLimit-Reset")).toMatch(/^\d+$/);
}

async function expectEnvelope(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  const answer = await response.json();
  expect(answer).toMatchObject({ data: null, meta: null, error: { code } });
  expect(answer.jsonrpc).toBeUndefined();
  return answer;
}

async function jsonRpc(response: Response, status = 200): Promise<Json> {
  expect(response.status).toBe(status);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  const answer = await response.json();
  expect(answer.jsonrpc).toBe("2.0");
  return answer;
}

const featureOf = async (project: ImportedProject, id: number) =>
  (await body(await ctx.get(`/api/v3/projects/${project.slug}/admin/features/${id}`, project.secretKey))).data;
const eventsOf = async (project: ImportedProject) =>
  (await body(await ctx.get(`/api/v3/projects/${project.slug}/admin/events`, project.secretKey))).data;

describe("raw JSON-RPC", () => {
  it("initialize answers JSON with the negotiated protocol, server info and tools capability, no session id; counts a read", async () => {
    const project = await ctx.importProject(seed());
    ctx.clock.pinInsideWindow();
    const response = await post(
      project,
      request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "8" } }),
    );
    const answer = await jsonRpc(response);
    expect(answer.result).toMatchObject({
      protocolVersion: "2025-06-18",
      capabilities: { tools: {} },
      serverInfo: { name: "feedback-board", version: "3" },
    });
    expect(response.headers.get("Mcp-Session-Id")).toBeNull();
    expect(rate(response)).toMatchObject({ limit: READS, remaining: READS - 1 });
    expect(response.headers.get("X-Request-Id")).toBeTruthy();

    // An older protocol is answered with the newest served (the client decides whether to go on).
    const old = await jsonRpc(
      await post(
        project,
        request("initialize", { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "old", version: "1" } }),
      ),
    );
    expect(old.result.protocolVersion >= "2025-06-18").toBe(true);

    const notified = await post(project, { jsonrpc: "2.0", method: "notifications/initialized" });
    expect(notified.status).toBe(202);
    expect(await notified.text()).toBe("");
    expect(rate(notified)).toMatchObject({ limit: READS, remaining: READS - 3 });
    ctx.clock.release();
  });

  it("tools/list and tools/call need no initialize first; the key may be a bearer token", async () => {
    const project = await ctx.importProject(seed());
    const { ids } = project.ids;
    const listed = await jsonRpc(
      await post(project, request("tools/list"), { Authorization: `Bearer ${project.secretKey}`, "MCP-Protocol-Version": "2025-06-18" }),
    );
    expect(listed.result.tools.map((t: Json) => t.name)).toContain("update_feature");
    const got = await jsonRpc(await post(project, toolCall("get_feature", { feature_id: ids.features.dark })));
    expect(got.result.structuredContent).toMatchObject({ id: ids.features.dark, heading: "Dark mode", comments: [{ content: "Please!" }] });
    expect(JSON.parse(got.result.content[0].text)).toEqual(got.result.structuredContent);
    expect(got.result.isError ?? false).toBe(false);
  });

  it("tools/list input schemas have no type lists: a nullable argument is an anyOf with a null branch", async () => {
    const project = await ctx.importProject(seed());
    const { tools } = (await jsonRpc(await post(project, request("tools/list")))).result;
    const typeLists: string[] = [];
    // Every `type` keyword of every schema, whatever its depth (properties, items, anyOf...);
    // the keys of `properties` are argument names (list_events has one named type), not keywords.
    const walk = (schema: unknown, path: string): void => {
      if (Array.isArray(schema)) {
        for (const [index, item] of schema.entries()) walk(item, `${path}/${index}`);
      } else if (schema !== null && typeof schema === "object") {
        for (const [key, value] of Object.entries(schema)) {
          if (key === "type" && typeof value !== "string") typeLists.push(`${path}/type: ${JSON.stringify(value)}`);
          if (key === "properties") for (const [name, property] of Object.entries(value as object)) walk(property, `${path}/${name}`);
          else if (key !== "examples" && key !== "default" && key !== "enum" && key !== "const") walk(value, `${path}/${key}`);
        }
      }
    };
    expect(tools.length).toBeGreaterThanOrEqual(9);
    for (const tool of tools) walk(tool.inputSchema, tool.name);
    expect(typeLists).toEqual([]);
    const update = tools.find((tool: Json) => tool.name === "update_feature").inputSchema;
    // Nullable: its type and constraints in one branch, null in the other, the description beside.
    expect(update.properties.effort).toMatchObject({
      anyOf: [{ type: "integer", minimum: 0 }, { type: "null" }],
      description: expect.any(String),
    });
    expect(update.properties.start_date.anyOf).toEqual([{ type: "string", format: "date-time" }, { type: "null" }]);
    const reply = tools.find((tool: Json) => tool.name === "reply_as_team").inputSchema;
    expect(reply.properties.parent_id.anyOf).toContainEqual({ type: "null" });
  });

  it("a tool call counts once against its wrapped route's budget: reads for read tools, writes for write tools", async () => {
    const project = await ctx.importProject(seed());
    const { ids } = project.ids;
    ctx.clock.pinInsideWindow();
    const list = await post(project, request("tools/list"));
    expect(rate(list)).toMatchObject({ limit: READS, remaining: READS - 1 });
    // get_feature reads two routes in process; the call is one read.
    const read = await post(project, toolCall("get_feature", { feature_id: ids.features.dark }));
    expect(rate(read)).toMatchObject({ limit: READS, remaining: READS - 2 });
    const write = await post(project, toolCall("update_feature", { feature_id: ids.features.dark, is_pinned: true }));
    expect((await jsonRpc(write)).result.structuredContent.is_pinned).toBe(true);
    expect(rate(write)).toMatchObject({ limit: WRITES, remaining: WRITES - 1 });
    // A refused write tool call counts as the route's refusal would: a write.
    const refused = await post(project, toolCall("update_feature", { feature_id: ids.features.dark, progress: -1 }));
    expect((await jsonRpc(refused)).result).toMatchObject({ isError: true });
    expect(rate(refused)).toMatchObject({ limit: WRITES, remaining: WRITES - 2 });
    for (let i = 0; i < WRITES - 2; i++) {
      expect((await post(project, toolCall("update_feature", { feature_id: ids.features.dark, progress: i }))).status).toBe(200);
    }
    const limited = await post(project, toolCall("update_feature", { feature_id: ids.features.dark, progress: 99 }));
    await expectEnvelope(limited, 429, "rate_limited");
    expect(Number(limited.headers.get("Retry-After"))).toBeGreaterThan(0);
    expectRateHeaders(limited, WRITES);
    expect((await featureOf(project, ids.features.dark)).progress).toBe(WRITES - 3);
    // The read budget is the reads' own.
    expect((await post(project, toolCall("search_features", { q: "dark" }))).status).toBe(200);
    ctx.clock.release();
  });

  it("malformed messages get JSON-RPC errors, with the rate headers", async () => {
    const project = await ctx.importProject(seed());
    const notJson = await post(project, "{not json");
    expect((await jsonRpc(notJson, 400)).error.code).toBe(-32700);
    expectRateHeaders(notJson, READS);
    const notMessage = await post(project, { hello: "world" });
    expect((await jsonRpc(notMessage, 400)).error.code).toBe(-32700);
    expectRateHeaders(notMessage, READS);
    const batch = await post(project, [request("tools/list"), request("tools/list")]);
    expect((await jsonRpc(batch, 400)).error).toMatchObject({ code: -32600 });
    expectRateHeaders(batch, READS);
    const unknownMethod = await post(project, request("resources/list"));
    expect((await jsonRpc(unknownMethod)).error.code).toBe(-32601);
    const noAccept = await ctx.app.request(`/api/v3/projects/${project.slug}/mcp`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-API-Key": project.secretKey },
      body: JSON.stringify(request("tools/list")),
    });
    expect(noAccept.status).toBe(406);
    expectRateHeaders(noAccept, READS);
    const oldHeader = await post(project, request("tools/list"), { "X-API-Key": project.secretKey, "MCP-Protocol-Version": "2025-03-26" });
    expect((await jsonRpc(oldHeader, 400)).error.message).toContain("protocol version");
  });

  it("an unknown tool is the JSON-RPC error -32602 in an HTTP 200, counted as a read", async () => {
    const project = await ctx.importProject(seed());
    const response = await post(project, toolCall("drop_database", {}));
    const answer = await jsonRpc(response, 200);
    expect(answer.error.code).toBe(-32602);
    expect(answer.result).toBeUndefined();
    expectRateHeaders(response, READS);
  });

  it("arguments that are not an object (array, string, number, null) are an isError result: validation_failed naming arguments", async () => {
    const project = await ctx.importProject(seed());
    const { ids } = project.ids;
    for (const args of [[ids.features.dark], "feature_id=1", 41, null, true]) {
      const response = await post(project, request("tools/call", { name: "get_feature", arguments: args }));
      const answer = await jsonRpc(response);
      expect(answer.error, JSON.stringify(args)).toBeUndefined();
      expect(answer.result.isError).toBe(true);
      const error = JSON.parse(answer.result.content[0].text);
      expect(error).toMatchObject({ code: "validation_failed", field: "arguments" });
      expect(error.message).toMatch(/^arguments: /);
      expect(answer.result.structuredContent).toEqual({ error });
      expectRateHeaders(response, READS);
    }
    const write = await jsonRpc(await post(project, request("tools/call", { name: "update_feature", arguments: [] })));
    expect(JSON.parse(write.result.content[0].text)).toMatchObject({ code: "validation_failed", field: "arguments" });
    expect(await eventsOf(project)).toEqual([]);
    // Absent arguments are no arguments: a tool without required ones runs.
    const listed = await jsonRpc(await post(project, request("tools/call", { name: "search_features" })));
    expect(listed.result.isError ?? false).toBe(false);
  });

  it("GET (and any method but POST) answers 405 with Allow: POST, before the key check; rate headers with a key of the project", async () => {
    const project = await ctx.importProject(seed());
    const other = await ctx.importProject(seed());
    const path = `/api/v3/projects/${project.slug}/mcp`;
    ctx.clock.pinInsideWindow();
    // [method, headers, the budget counted (null: no rate headers)]
    const cases: [string, Record<string, string>, number | null][] = [
      ["GET", { "X-API-Key": project.secretKey, Accept: "text/event-stream" }, READS],
      ["GET", { Authorization: `Bearer ${project.secretKey}`, Accept: "text/event-stream" }, READS],
      ["GET", { "X-API-Key": project.embedKey }, EMBED_READS],
      ["DELETE", { "X-API-Key": project.secretKey }, WRITES],
      ["GET", {}, null],
      ["GET", { "X-API-Key": "sk_not_a_real_key_0000000000" }, null],
      ["GET", { "X-API-Key": other.secretKey }, null],
      ["DELETE", { Authorization: `Bearer ${other.secretKey}` }, null],
    ];
    for (const [method, headers, limit] of cases) {
      const response = await ctx.app.request(path, { method, headers });
      await expectEnvelope(response, 405, "method_not_allowed");
      expect(response.headers.get("Allow")).toBe("POST");
      if (limit === null) expect(response.headers.get("X-RateLimit-Limit"), `${method} ${JSON.stringify(headers)}`).toBeNull();
      else expectRateHeaders(response, limit);
    }
    // Each 405 with the secret key was counted once against its budget.
    const next = await post(project, request("tools/list"));
    expect(rate(next)).toMatchObject({ limit: READS, remaining: READS - 3 });
    ctx.clock.release();
  });
});

describe("key refusals are the JSON envelope and change nothing", () => {
  it("missing, invalid, embed and another project's key", async () => {
    const project = await ctx.importProject(seed());
    const other = await ctx.importProject(seed());
    const { ids } = project.ids;
    const write = toolCall("update_feature", { feature_id: ids.features.dark, heading: "Hacked" });
    // [headers, status, code, the budget counted (null: no rate headers, the key is not the project's)]
    const cases: [Record<string, string>, number, string, number | null][] = [
      [{}, 401, "missing_key", null],
      [{ Authorization: `Basic ${btoa(`x:${project.secretKey}`)}` }, 401, "missing_key", null],
      [{ "X-API-Key": "sk_not_a_real_key_0000000000" }, 401, "invalid_key", null],
      [{ Authorization: "Bearer sk_not_a_real_key_0000000000" }, 401, "invalid_key", null],
      // The embed key is a valid key of the project: counted as the message says, on its own budgets.
      [{ "X-API-Key": project.embedKey }, 403, "not_allowed", EMBED_WRITES],
      [{ Authorization: `Bearer ${project.embedKey}` }, 403, "not_allowed", EMBED_WRITES],
      [{ "X-API-Key": other.secretKey }, 403, "key_wrong_project", null],
      [{ Authorization: `Bearer ${other.secretKey}` }, 403, "key_wrong_project", null],
    ];
    ctx.clock.pinInsideWindow();
    for (const [headers, status, code, limit] of cases) {
      const response = await post(project, write, headers);
      await expectEnvelope(response, status, code);
      if (limit === null) expect(response.headers.get("X-RateLimit-Limit"), code).toBeNull();
      else expectRateHeaders(response, limit);
    }
    const listed = await post(project, request("tools/list"), { "X-API-Key": project.embedKey });
    await expectEnvelope(listed, 403, "not_allowed");
    expect(rate(listed)).toMatchObject({ limit: EMBED_READS, remaining: EMBED_READS - 1 });
    const written = await post(project, write, { "X-API-Key": project.embedKey });
    expect(rate(written)).toMatchObject({ limit: EMBED_WRITES, remaining: EMBED_WRITES - 3 });
    ctx.clock.release();
    expect((await featureOf(project, ids.features.dark)).heading).toBe("Dark mode");
    expect(await eventsOf(project)).toEqual([]);
  });

  it("an unknown project is 404 not_found", async () => {
    const project = await ctx.importProject(seed());
    const response = await ctx.app.request("/api/v3/projects/no-such-project-here/mcp", {
      method: "POST",
      headers: { ...STREAMABLE, "X-API-Key": project.secretKey },
      body: JSON.stringify(request("tools/list")),
    });
    await expectEnvelope(response, 404, "not_found");
  });

  it("refused tool calls (bad arguments, route refusals) change nothing", async () => {
    const project = await ctx.importProject(seed());
    const { ids } = project.ids;
    for (const args of [
      { feature_id: ids.features.dark, heading: "" },
      { feature_id: ids.features.dark, status: "shipped" },
      { feature_id: ids.features.dark, board: "nope", heading: "Moved" },
    ]) {
      const answer = await jsonRpc(await post(project, toolCall("update_feature", args)));
      expect(answer.result.isError).toBe(true);
      expect(JSON.parse(answer.result.content[0].text).code).toBe("validation_failed");
    }
    expect((await featureOf(project, ids.features.dark)).heading).toBe("Dark mode");
    expect(await eventsOf(project)).toEqual([]);
  });
});

describe("Idempotency-Key header", () => {
  it("replays the whole answer of the same message and runs the tool once", async () => {
    const project = await ctx.importProject(seed());
    const { ids } = project.ids;
    const message = toolCall("merge_features", { feature_id: ids.features.dup, into_id: ids.features.dark });
    const headers = { "X-API-Key": project.secretKey, "Idempotency-Key": "raw-merge-1" };
    const first = await post(project, message, headers);
    const firstText = await first.text();
    const again = await post(project, message, headers);
    expect(again.headers.get("Idempotent-Replay")).toBe("true");
    expect(await again.text()).toBe(firstText);
    expect(JSON.parse(firstText).result.isError ?? false).toBe(false);
    const merges = (await eventsOf(project)).filter((event: Json) => event.type === "feature.merged");
    expect(merges).toHaveLength(1);
  });
});
