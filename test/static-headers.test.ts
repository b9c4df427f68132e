/**
 * src/middleware/static-headers.ts: the secure headers of hono's secureHeaders, X-API-Version,
 * Access-Control-Expose-Headers and Vary reach every answer once, the same through Node's
 * ServerResponse (a real @hono/node-server) as in process, on 200, 304, 404 and 422 alike, and a
 * header the route sets itself wins.
 */
import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { secureHeaderValues, staticHeadersMiddleware } from "../src/middleware/static-headers.ts";
import { createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
let project: ImportedProject;
let server: ServerType;
let base: string;

function listen(fetch: (request: Request) => Response | Promise<Response>): Promise<{ server: ServerType; base: string }> {
  return new Promise((resolve) => {
    const started = serve({ fetch, port: 0, hostname: "127.0.0.1" }, (info: AddressInfo) => {
      resolve({ server: started, base: `http://127.0.0.1:${info.port}` });
    });
  });
}

beforeAll(async () => {
  ctx = await createTestContext();
  project = await ctx.importProject();
  ({ server, base } = await listen(ctx.app.fetch));
});
afterAll(async () => {
  server.close();
  await ctx.close();
});

/** The static headers every answer must carry, with their exact values. */
async function expectedStaticHeaders(): Promise<Map<string, string>> {
  const expected = new Map(await secureHeaderValues({ crossOriginResourcePolicy: "cross-origin" }));
  expected.set("x-api-version", "3");
  expected.set("vary", "Origin");
  expected.set("access-control-expose-headers", expect.stringContaining("X-RateLimit-Remaining") as unknown as string);
  return expected;
}

function staticPart(response: Response, names: Iterable<string>): Record<string, string | null> {
  return Object.fromEntries([...names].map((name) => [name, response.headers.get(name)]));
}

describe("static response headers", () => {
  it("are on every kind of answer, once, the same over HTTP as in process", async () => {
    const expected = await expectedStaticHeaders();
    expect(expected.get("x-content-type-options")).toBe("nosniff");
    const key = { "X-API-Key": project.secretKey };
    const board = `/api/v3/projects/${project.slug}`;
    const etag = (await ctx.app.request(board, { headers: key })).headers.get("ETag")!;
    const requests: [string, RequestInit, number][] = [
      ["/api/v3/health", {}, 200],
      [board, { headers: { ...key, "If-None-Match": etag } }, 304],
      [`${board}/features/999999`, { headers: key }, 404],
      [`${board}/features?sort=sideways`, { headers: key }, 422],
      ["/api/v3/no-such-route", {}, 404],
    ];
    for (const [path, init, status] of requests) {
      const overHttp = await fetch(`${base}${path}`, init);
      const inProcess = await ctx.app.request(path, init);
      expect([overHttp.status, inProcess.status]).toEqual([status, status]);
      // fetch joins a repeated header with ", ": an exact value also proves it came once.
      expect(staticPart(overHttp, expected.keys())).toEqual(Object.fromEntries(expected));
      expect(staticPart(inProcess, expected.keys())).toEqual(staticPart(overHttp, expected.keys()));
      await overHttp.arrayBuffer();
    }
  });

  it("rate-limit headers reach every keyed answer over HTTP, 304 and 429 included", async () => {
    const limited = await createTestContext({ RATE_LIMIT_READS_PER_MINUTE: "4" });
    const own = await listen(limited.app.fetch);
    try {
      const { slug, secretKey } = await limited.importProject();
      const key = { "X-API-Key": secretKey };
      const board = `/api/v3/projects/${slug}`;
      limited.clock.pinInsideWindow();
      const first = await fetch(`${own.base}${board}`, { headers: key });
      const etag = first.headers.get("ETag")!;
      await first.arrayBuffer();
      const answers = [first];
      for (const [path, init] of [
        [board, { headers: { ...key, "If-None-Match": etag } }],
        [`${board}/features/999999`, { headers: key }],
        [`${board}/features?sort=sideways`, { headers: key }],
        [board, { headers: key }],
      ] as [string, RequestInit][]) {
        const response = await fetch(`${own.base}${path}`, init);
        await response.arrayBuffer();
        answers.push(response);
      }
      expect(answers.map((r) => r.status)).toEqual([200, 304, 404, 422, 429]);
      expect(answers.map((r) => r.headers.get("X-RateLimit-Remaining"))).toEqual(["3", "2", "1", "0", "0"]);
      expect(new Set(answers.map((r) => r.headers.get("X-RateLimit-Limit")))).toEqual(new Set(["4"]));
      const resets = new Set(answers.map((r) => r.headers.get("X-RateLimit-Reset")));
      expect(resets.size).toBe(1);
      expect(Number([...resets][0]) % 60).toBe(0);
      expect(Number(answers[4]!.headers.get("Retry-After"))).toBeGreaterThan(0);
    } finally {
      own.server.close();
      await limited.close();
    }
  });

  it("a cached hit written straight to Node carries the whole header set of the route's own answer, 200 and 304", async () => {
    const path = `/api/v3/projects/${project.slug}/features?sort=top`;
    const headers = { "X-API-Key": project.embedKey, Origin: "https://allowed.example", "X-Request-Id": "hit-1" };
    // Built through the route in process; the same app's cache then answers over HTTP.
    const built = await ctx.app.request(path, { headers });
    const builtBody = await built.text();
    const stats = ctx.deps.caches.readStats;
    const hitsBefore = stats.hits;
    const viaNode = await fetch(`${base}${path}`, { headers });
    expect(viaNode.status).toBe(200);
    expect(await viaNode.text()).toBe(builtBody);
    const notModified = await fetch(`${base}${path}`, { headers: { ...headers, "If-None-Match": built.headers.get("ETag")! } });
    const notModifiedInProcess = await ctx.app.request(path, { headers: { ...headers, "If-None-Match": built.headers.get("ETag")! } });
    expect([notModified.status, notModifiedInProcess.status]).toEqual([304, 304]);
    expect(await notModified.text()).toBe("");
    expect(stats.hits - hitsBefore).toBe(3);
    // Node's own framing headers aside, the same names and values (the rate budget moved on).
    const framing = new Set(["content-length", "date", "connection", "keep-alive"]);
    const comparable = (response: Response) =>
      Object.fromEntries(
        [...response.headers]
          .filter(([name]) => !framing.has(name))
          .map(([name, value]) => [name, name === "x-ratelimit-remaining" ? "n" : value]),
      );
    expect(built.headers.get("Access-Control-Allow-Origin")).toBe("https://allowed.example");
    expect(built.headers.get("X-Request-Id")).toBe("hit-1");
    expect(built.headers.get("Cache-Control")).toBe("private, max-age=60");
    expect(comparable(viaNode)).toEqual(comparable(built));
    expect(comparable(notModified)).toEqual(comparable(notModifiedInProcess));
    expect(viaNode.headers.get("Content-Length")).toBe(String(Buffer.byteLength(builtBody)));
  });

  it("yield to a header the route sets itself", async () => {
    const app = new Hono()
      .use(
        staticHeadersMiddleware(
          Promise.resolve([
            ["X-Frame-Options", "SAMEORIGIN"],
            ["X-API-Version", "3"],
          ]),
        ),
      )
      .get("/", (c) => c.json({ ok: true }, 200, { "X-Frame-Options": "DENY" }));
    const own = await listen(app.fetch);
    try {
      for (const response of [await fetch(`${own.base}/`), await app.request("/")]) {
        expect(response.headers.get("X-Frame-Options")).toBe("DENY");
        expect(response.headers.get("X-API-Version")).toBe("3");
      }
    } finally {
      own.server.close();
    }
  });
});
