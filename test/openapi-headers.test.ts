/**
 * The served /openapi.json describes the headers the service really sends and takes
 * (docs/contract/feedback-board-api-v3.md, "Limits", "Versioning", "Endpoints"): for real
 * answers of every kind (read, 304, write, replay, 401, 404, 409, 422, 429, open routes) each
 * of the contract's response headers on the wire is declared on that operation's response, and
 * the request headers are declared where the contract takes them.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Answer, body, createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";

const CONTRACT_HEADERS = [
  "x-request-id",
  "x-api-version",
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "retry-after",
  "idempotent-replay",
  "etag",
  "cache-control",
];

let ctx: TestContext;
let project: ImportedProject;
/** What these tests read of the OpenAPI document: parameters (or references to them), responses, security. */
interface Parameter {
  name: string;
  $ref?: string;
  schema: { type?: string; maxLength?: number };
}
interface Operation {
  parameters?: Parameter[];
  responses: Record<string, { headers?: Record<string, unknown>; content?: unknown }>;
  security?: unknown[];
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
}

let document: OpenApiDocument;
beforeAll(async () => {
  ctx = await createTestContext({ RATE_LIMIT_WRITES_PER_MINUTE: "4" });
  project = await ctx.importProject({
    features: [{ ref: "f1", board: "roadmap", column: "c-open", heading: "First" }],
  });
  document = (await (await ctx.app.request("/api/v3/openapi.json")).json()) as OpenApiDocument;
});
afterAll(() => ctx.close());
afterEach(() => ctx.clock.release());

/** The declared operation for a concrete path, matching path templates segment by segment. */
function operationFor(method: string, path: string): Operation {
  const segments = path.split("?")[0]!.split("/");
  for (const [template, item] of Object.entries(document.paths)) {
    const parts = template.split("/");
    if (parts.length === segments.length && parts.every((part, i) => part.startsWith("{") || part === segments[i])) {
      return item[method.toLowerCase()]!;
    }
  }
  throw new Error(`no operation for ${method} ${path}`);
}

const resolve = (ref: Parameter): Parameter =>
  ref.$ref
    ? (ref.$ref
        .split("/")
        .slice(1)
        .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], document) as Parameter)
    : ref;

function expectHeadersDeclared(method: string, path: string, response: Response) {
  const declared = operationFor(method, path).responses[String(response.status)];
  expect(declared, `${method} ${path} ${response.status} is documented`).toBeDefined();
  const names = Object.keys(declared!.headers ?? {}).map((name) => name.toLowerCase());
  const sent = CONTRACT_HEADERS.filter((name) => response.headers.has(name));
  expect(sent.length).toBeGreaterThan(0);
  for (const name of sent) expect(names, `${method} ${path} ${response.status} declares ${name}`).toContain(name);
  if (response.status === 304) expect(declared!.content).toBeUndefined();
}

function declaredParameters(method: string, path: string): string[] {
  return (operationFor(method, path).parameters ?? []).map((parameter) => resolve(parameter).name);
}

describe("response headers in /openapi.json", () => {
  it("declares every contract header each kind of answer carries", async () => {
    const base = `/api/v3/projects/${project.slug}`;
    const key = project.secretKey;
    const featureId = project.ids.ids.features.f1;
    const check = async (method: string, path: string, response: Response | Promise<Response>) => {
      const answered = await response;
      expectHeadersDeclared(method, path, answered);
      return answered;
    };

    const board = await check("GET", base, ctx.get(base, key));
    expect(board.status).toBe(200);
    expect((await check("GET", base, ctx.get(base, key, { "If-None-Match": board.headers.get("ETag")! }))).status).toBe(304);
    expect((await check("GET", `${base}/features/999999`, ctx.get(`${base}/features/999999`, key))).status).toBe(404);
    expect((await check("GET", `${base}/features?page=x`, ctx.get(`${base}/features?page=x`, key))).status).toBe(422);
    expect((await check("GET", base, ctx.get(base, "no-such-key"))).status).toBe(401);

    // Five writes against a budget of four, inside one rate window.
    ctx.clock.pinInsideWindow();
    const identity = await check("POST", `${base}/identity`, ctx.send("POST", `${base}/identity`, key));
    const voter = {
      "X-VF-Anon": (await body<Answer<"/api/v3/projects/{slug}/identity", "post">>(identity)).data.anon_token!,
      "Idempotency-Key": "headers-vote",
    };
    const vote = `${base}/features/${featureId}/vote`;
    expect((await check("POST", vote, ctx.send("POST", vote, key, undefined, voter))).status).toBe(200);
    const replay = await check("POST", vote, ctx.send("POST", vote, key, undefined, voter));
    expect(replay.headers.get("Idempotent-Replay")).toBe("true");
    const again = await check("POST", vote, ctx.send("POST", vote, key, undefined, { "X-VF-Anon": voter["X-VF-Anon"] }));
    expect(again.status).toBe(409);
    const limited = await check("POST", vote, ctx.send("POST", vote, key, undefined, { "X-VF-Anon": voter["X-VF-Anon"] }));
    expect(limited.status).toBe(429);
    expect(limited.headers.get("Retry-After")).toBeTruthy();

    const health = await check("GET", "/api/v3/health", ctx.app.request("/api/v3/health"));
    expect(
      (
        await check(
          "GET",
          "/api/v3/health",
          ctx.app.request("/api/v3/health", { headers: { "If-None-Match": health.headers.get("ETag")! } }),
        )
      ).status,
    ).toBe(304);
  });

  it("declares the request headers the contract takes", () => {
    const base = "/api/v3/projects/s";
    for (const read of [`${base}`, `${base}/features`, `${base}/features/1/comments`, `${base}/changelog`, `${base}/messages`]) {
      expect(declaredParameters("GET", read)).toEqual(expect.arrayContaining(["X-Request-Id", "If-None-Match"]));
    }
    for (const read of [`${base}/features`, `${base}/features/1`, `${base}/features/1/comments`, `${base}/messages`]) {
      expect(declaredParameters("GET", read)).toEqual(expect.arrayContaining(["X-VF-Anon", "X-VF-Token"]));
    }
    for (const [method, write] of [
      ["POST", `${base}/features/1/vote`],
      ["DELETE", `${base}/comments/1`],
      ["POST", `${base}/messages/1/dismiss`],
    ] as const) {
      expect(declaredParameters(method, write)).toEqual(
        expect.arrayContaining(["X-Request-Id", "Idempotency-Key", "X-VF-Anon", "X-VF-Token"]),
      );
      expect(operationFor(method, write).security).toEqual([
        { ApiKey: [], VoterAnon: [] },
        { ApiKey: [], VoterToken: [] },
      ]);
    }
    const idempotencyKey = resolve(
      operationFor("POST", `${base}/features/1/vote`).parameters!.find((p) => resolve(p).name === "Idempotency-Key")!,
    );
    expect(idempotencyKey.schema.maxLength).toBe(200);
    const churned = operationFor("GET", `${base}/voters`).parameters!.find((p) => p.name === "churned")!;
    expect(churned.schema.type).toBe("boolean");
    for (const open of ["/api/v3/health", "/api/v3/openapi.json", "/api/v3/docs"]) expect(operationFor("GET", open).security).toEqual([]);
  });
});
