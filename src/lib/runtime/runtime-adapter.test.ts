/**
 * Each library internal of runtime-adapter.ts, checked against the installed versions: these
 * fail when an upgrade of @hono/node-server, hono or kysely-postgres-js changes what the hot path
 * relies on.
 */
import { request as httpRequest, IncomingMessage, type Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cachedStringBody,
  nodeRequest,
  nodeResponse,
  replaceBodyText,
  requestBodyBytes,
  verbatimRequestTarget,
} from "./runtime-adapter.ts";

describe("under @hono/node-server", () => {
  const seen: { body?: string; jsonBody?: string; incoming?: unknown; outgoing?: unknown; contentLength?: string } = {};
  let server: Server;
  let origin: string;

  beforeAll(async () => {
    const app = new Hono();
    app.use(async (c, next) => {
      seen.incoming = nodeRequest(c);
      seen.outgoing = nodeResponse(c);
      seen.contentLength = nodeRequest(c)?.headers["content-length"];
      await next();
      seen.body = cachedStringBody(c.res);
    });
    app.get("/text", (c) => c.text("hello"));
    app.get("/json", (c) => c.json({ a: 1 }));
    app.post("/body", async (c) => {
      const bytes = await requestBodyBytes(c);
      return c.json({ length: bytes.length, json: await c.req.json() });
    });
    await new Promise<void>((resolve) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve()) as Server;
    });
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("a string body is readable from the lightweight Response without a stream", async () => {
    expect(await (await fetch(`${origin}/text`)).text()).toBe("hello");
    expect(seen.body).toBe("hello");
    await (await fetch(`${origin}/json`)).text();
    expect(seen.body).toBe('{"a":1}');
  });

  it("requestBodyBytes reads a body sent by length or in chunks, and json() parses its text", async () => {
    const body = '\uFEFF{"a":"\u00e9\u{1F600}"}';
    const expected = { length: Buffer.byteLength(body), json: { a: "\u00e9\u{1F600}" } };
    const byLength = await fetch(`${origin}/body`, { method: "POST", body, headers: { "Content-Type": "application/json" } });
    expect(await byLength.json()).toEqual(expected);
    const chunked = await fetch(`${origin}/body`, {
      method: "POST",
      body: new Blob([body]).stream(),
      headers: { "Content-Type": "application/json" },
      duplex: "half",
    } as RequestInit);
    expect(await chunked.json()).toEqual(expected);
  });

  it("Node's request and response are on the context", async () => {
    await (await fetch(`${origin}/text`, { method: "GET" })).text();
    expect(seen.incoming).toBeInstanceOf(IncomingMessage);
    expect(seen.outgoing).toBeInstanceOf(ServerResponse);
  });

  it("in-process requests have neither; a body of bytes has no cached string", async () => {
    const app = new Hono();
    let found: unknown[] = [];
    app.get("/", (c) => {
      found = [nodeRequest(c), nodeResponse(c)];
      return c.text("x");
    });
    const response = await app.request("/");
    expect(found).toEqual([undefined, undefined]);
    expect(cachedStringBody(new Response(new Uint8Array([120])))).toBeUndefined();
    expect(await response.text()).toBe("x");
  });
});

describe("hono's body cache", () => {
  it("a replaced body text is what json() and text() read afterwards, even after arrayBuffer()", async () => {
    const app = new Hono();
    app.post("/", async (c) => {
      await c.req.arrayBuffer();
      await c.req.text();
      replaceBodyText(c, '{"replaced":true}');
      return c.json({ json: await c.req.json(), text: await c.req.text() });
    });
    const response = await app.request("/", { method: "POST", body: "", headers: { "Content-Type": "application/json" } });
    expect(await response.json()).toEqual({ json: { replaced: true }, text: '{"replaced":true}' });
  });

  it("requestBodyBytes leaves the text, decoded as fetch decodes it, where json() and text() read it", async () => {
    const app = new Hono();
    app.post("/", async (c) => {
      const bytes = await requestBodyBytes(c);
      // json() and text() must not need the bytes: they read the text left beside them.
      delete (c.req.bodyCache as Record<string, unknown>).arrayBuffer;
      return c.json({ length: bytes.length, json: await c.req.json(), text: await c.req.text() });
    });
    const body = '\uFEFF{"a":"\u00e9"}';
    const response = await app.request("/", { method: "POST", body, headers: { "Content-Type": "application/json" } });
    expect(await response.json()).toEqual({ length: Buffer.byteLength(body), json: { a: "\u00e9" }, text: '{"a":"\u00e9"}' });
  });

  it("requestBodyBytes after the text was read gives that text's bytes", async () => {
    const app = new Hono();
    app.post("/", async (c) => {
      const text = await c.req.text();
      return c.json({ same: Buffer.from(await requestBodyBytes(c)).toString("utf8") === text, json: await c.req.json() });
    });
    const response = await app.request("/", { method: "POST", body: '{"b":[1,2]}', headers: { "Content-Type": "application/json" } });
    expect(await response.json()).toEqual({ same: true, json: { b: [1, 2] } });
  });
});

describe("a request target used as sent", () => {
  it("is, when verbatimRequestTarget says so, the URL @hono/node-server builds and the path and query hono reads", async () => {
    const seen: { url?: string; path?: string; target?: string | undefined } = {};
    const app = new Hono();
    app.use(async (c) => {
      seen.url = c.req.url;
      seen.path = c.req.path;
      seen.target = verbatimRequestTarget(nodeRequest(c)!);
      return c.text("x");
    });
    const server = await new Promise<Server>((resolve) => {
      const started = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(started as Server));
    });
    const port = (server.address() as AddressInfo).port;
    const ask = (host: string, target: string) =>
      new Promise<void>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port, path: target, headers: { Host: host } }, (res) => {
          res.resume();
          res.on("end", resolve);
        });
        req.on("error", reject);
        req.end();
      });
    const here = `127.0.0.1:${port}`;
    // [Host, target, used as sent]
    const cases: [string, string, boolean][] = [
      [here, "/api/v3/projects/a-b/features?sort=top&tag=3", true],
      ["api.example.com", "/api/v3/board?x=a:b@c;d,e'f(g)*h+i!j$k~", true],
      [here, "/api/v3/projects/a/features/", true],
      [here, "/a/./b", false],
      [here, "/a/../b?x", false],
      [here, "/a/%7e?x", false],
      [here, "/a?x=%20", false],
      [here, '/a?x="b"', false],
      [here, "/a/b#c", false],
      ["API.example.com", "/a", false],
      ["127.0.0.1:80", "/a", false],
    ];
    try {
      for (const [host, target, verbatim] of cases) {
        await ask(host, target);
        expect([target, seen.target]).toEqual([target, verbatim ? target : undefined]);
        if (verbatim) {
          expect(seen.url).toBe(`http://${host}${target}`);
          expect(seen.path).toBe(target.split("?")[0]);
        }
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
