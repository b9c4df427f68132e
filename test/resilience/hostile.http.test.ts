/**
 * Over real HTTP against the server child: request bodies over one megabyte however they are
 * framed (Content-Length, chunked, conflicting headers) are refused before any handler runs and
 * nothing is created; and the keys, tokens and SSO secret used during the run never appear in
 * the server's log (pino JSON on stdout). A second check runs an in-process app with a pino
 * destination stream at trace level and no redaction, so that a secret handed to the logger at
 * all would show.
 */
import { connect } from "node:net";
import { Writable } from "node:stream";
import { SignJWT } from "jose";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/connect.ts";
import { createApp } from "../../src/app.ts";
import { createTestContext } from "../support/harness.ts";
import { expectError, expectNoSecrets } from "./support/assertions.ts";
import { json, send } from "./support/http.ts";
import { idsOf } from "./support/seed.ts";
import { type Stack, startStack } from "./support/stack.ts";
import { recordCount } from "./support/tally.ts";

const MB = 1024 * 1024;
const SSO_SECRET = `sso-secret-${Date.now()}-do-not-log-me-0123456789`;
let stack: Stack;
let slug: string;
let secretKey: string;
let embedKey: string;
let anon: string;
let featureId: number;
const secrets: string[] = [];

beforeAll(async () => {
  stack = await startStack({ env: { LOG_LEVEL: "info" } });
  anon = `anon-http-${Date.now()}-secret-token`;
  const imported = await stack.seeder.importProject({
    project: { sso_secret: SSO_SECRET },
    voters: [{ ref: "v", kind: "anonymous", anon_token: anon }],
    features: [{ ref: "f", board: "roadmap", column: "c-open", heading: "Framing", description: "Bodies" }],
  });
  slug = imported.slug;
  secretKey = imported.secretKey;
  embedKey = imported.embedKey;
  featureId = idsOf(imported).features.f;
  secrets.push(secretKey, embedKey, anon, SSO_SECRET);
});
afterAll(() => stack?.close());

/**
 * Sends raw bytes on a fresh connection, chunk by chunk with backpressure, and stops sending as
 * soon as an answer arrives (so the server's early answer is not lost to a reset); resolves with
 * the status and body that came back.
 */
function raw(head: string, chunks: Iterable<string>, timeoutMs = 10_000): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const socket = connect(stack.server.port, "127.0.0.1");
    let received = "";
    let closed = false;
    const done = () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0);
      const bodyStart = received.indexOf("\r\n\r\n");
      resolve({ status, text: bodyStart >= 0 ? received.slice(bodyStart + 4) : "" });
      socket.destroy();
    };
    const timer = setTimeout(done, timeoutMs);
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      received += chunk;
      const headEnd = received.indexOf("\r\n\r\n");
      const length = /content-length: (\d+)/i.exec(received.slice(0, Math.max(0, headEnd)))?.[1];
      if (headEnd >= 0 && (length === undefined || received.length - headEnd - 4 >= Number(length))) {
        clearTimeout(timer);
        done();
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      closed = true;
      clearTimeout(timer);
      done();
    });
    socket.on("connect", async () => {
      for (const chunk of [head, ...chunks]) {
        if (closed || received !== "") return;
        if (!socket.write(chunk))
          await new Promise((r) => {
            socket.once("drain", r);
            socket.once("close", r);
          });
      }
    });
  });
}

const headFor = (extra: string) =>
  `POST /api/v3/projects/${slug}/features/${featureId}/comments HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
  `X-API-Key: ${secretKey}\r\nX-VF-Anon: ${anon}\r\nContent-Type: application/json\r\n${extra}\r\n`;

const commentCount = async () =>
  (await stack.seeder.handle.db.selectFrom("comments").select("id").where("feature_id", "=", featureId).execute()).length;

function* chunked(total: number): Generator<string> {
  const piece = "a".repeat(16 * 1024);
  yield `c\r\n{"content":"\r\n`;
  for (let sent = 0; sent < total; sent += piece.length) yield `${piece.length.toString(16)}\r\n${piece}\r\n`;
  yield "0\r\n\r\n";
}

function* plain(total: number): Generator<string> {
  const piece = "a".repeat(16 * 1024);
  for (let sent = 0; sent < total; sent += piece.length) yield piece;
}

describe("bodies over one megabyte over HTTP", () => {
  it("refuses 1 MB + 1 byte sent with Content-Length (413 too_large), and takes exactly 1 MB", async () => {
    const before = await commentCount();
    const big = `{"content":"x","pad":"${"a".repeat(MB + 1 - 24)}"}`;
    expect(big.length).toBe(MB + 1);
    const refused = await send(
      stack.server.origin,
      {
        method: "POST",
        path: `/api/v3/projects/${slug}/features/${featureId}/comments`,
        headers: { "X-API-Key": secretKey, "X-VF-Anon": anon },
        body: big,
      },
      { fresh: true },
    );
    expect(refused.status).toBe(413);
    expectError(413, json(refused), "too_large");
    const exact = await send(
      stack.server.origin,
      {
        method: "POST",
        path: `/api/v3/projects/${slug}/features/${featureId}/comments`,
        headers: { "X-API-Key": secretKey, "X-VF-Anon": anon },
        body: `{"content":"x","pad":"${"a".repeat(MB - 24)}"}`,
      },
      { fresh: true },
    );
    expect(exact.status).not.toBe(413);
    expect(await commentCount()).toBe(before + (exact.status === 201 ? 1 : 0));
    recordCount("hostile", "1 MB + 1 byte over HTTP refused", 1);
  });

  it("refuses a chunked body without Content-Length once it passes 1 MB", async () => {
    const before = await commentCount();
    const response = await raw(headFor("Transfer-Encoding: chunked\r\n"), chunked(MB + 64 * 1024));
    expect(response.status).toBe(413);
    expectError(413, JSON.parse(response.text), "too_large");
    expect(await commentCount()).toBe(before);
    recordCount("hostile", "chunked body over 1 MB over HTTP refused", 1);
  });

  it("refuses conflicting framing headers before any handler; nothing is created and the server serves on", async () => {
    const before = await commentCount();
    const cases = [
      // Both framings at once: the HTTP parser refuses (400) or the body limit does (413).
      await raw(headFor("Content-Length: 20\r\nTransfer-Encoding: chunked\r\n"), chunked(2 * MB)),
      // Two different lengths.
      await raw(headFor(`Content-Length: 20\r\nContent-Length: ${2 * MB}\r\n`), plain(2 * MB)),
      // A declared length over the limit with a short body.
      await raw(headFor(`Content-Length: ${MB + 1}\r\n`), ['{"content":"short"}']),
      // Transfer-Encoding that is not chunked.
      await raw(headFor("Transfer-Encoding: gzip, chunked\r\n"), chunked(2 * MB)),
    ];
    // The first two never reach the app: Node's HTTP parser refuses ambiguous framing (request
    // smuggling) with a bare 400 and closes, and the close may overtake the 400 (status 0 here:
    // no answer, connection closed). The last two reach the body limit: 413 too_large.
    const seen = cases.map((c) => c.status);
    expect([0, 400], `${seen}`).toContain(seen[0]);
    expect([0, 400], `${seen}`).toContain(seen[1]);
    for (const result of cases.slice(2)) {
      expect(result.status, `${seen}`).toBe(413);
      expectError(413, JSON.parse(result.text), "too_large");
    }
    expect(await commentCount()).toBe(before);
    const health = await send(stack.server.origin, { path: "/api/v3/health" }, { fresh: true });
    expect(health.status).toBe(200);
    console.info(`conflicting framing answered: ${cases.map((c) => c.status).join(", ")}`);
    recordCount("hostile", "conflicting body framing over HTTP refused", cases.length);
  });
});

describe("keys, tokens and the SSO secret never reach the logs", () => {
  async function exercise(
    request: (init: {
      method?: string;
      path: string;
      headers?: Record<string, string>;
      body?: string;
    }) => Promise<{ status: number; text: string }>,
    project: { slug: string; secretKey: string; embedKey: string; anon: string; featureId: number; ssoSecret: string },
  ) {
    const enc = new TextEncoder();
    const token = await new SignJWT({ sub: "log-user", name: "Log User", email: "log@example.test" })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("10m")
      .sign(enc.encode(project.ssoSecret));
    const badToken = `${token.slice(0, -4)}AAAA`;
    const used = [token, badToken];
    const base = `/api/v3/projects/${project.slug}`;
    const calls: { method?: string; path: string; headers: Record<string, string>; body?: string }[] = [
      { path: base, headers: { "X-API-Key": project.secretKey } },
      { path: base, headers: { "X-API-Key": project.embedKey, Origin: "https://evil.example" } },
      {
        path: `${base}/features?q=${encodeURIComponent(project.secretKey)}`,
        headers: { "X-API-Key": project.secretKey, "X-VF-Anon": project.anon },
      },
      { path: `${base}/features/${project.featureId}`, headers: { "X-API-Key": project.secretKey, "X-VF-Token": token } },
      { path: `${base}/features/${project.featureId}`, headers: { "X-API-Key": project.secretKey, "X-VF-Token": badToken } },
      { path: base, headers: { "X-API-Key": `${project.secretKey}x` } },
      { method: "POST", path: `${base}/identity`, headers: { "X-API-Key": project.secretKey }, body: "{}" },
      {
        method: "POST",
        path: `${base}/identity`,
        headers: { "X-API-Key": project.secretKey },
        body: JSON.stringify({ anon_token: project.anon }),
      },
      { method: "POST", path: `${base}/identity`, headers: { "X-API-Key": project.secretKey }, body: JSON.stringify({ sso_token: token }) },
      {
        method: "POST",
        path: `${base}/identity`,
        headers: { "X-API-Key": project.secretKey },
        body: JSON.stringify({ sso_token: badToken }),
      },
      { method: "POST", path: `${base}/identity`, headers: { "X-API-Key": project.secretKey, "X-VF-Anon": project.anon } },
      {
        method: "POST",
        path: `${base}/features/${project.featureId}/vote`,
        headers: { "X-API-Key": project.secretKey, "X-VF-Token": token, "Idempotency-Key": project.secretKey.slice(0, 30) },
      },
      {
        method: "POST",
        path: `${base}/features/${project.featureId}/comments`,
        headers: { "X-API-Key": project.secretKey, "X-VF-Anon": project.anon, "Content-Type": "application/json" },
        body: JSON.stringify({ content: "logged?" }),
      },
      {
        method: "POST",
        path: `${base}/features/${project.featureId}/comments`,
        headers: { "X-API-Key": project.secretKey, "X-VF-Anon": project.anon, "Content-Type": "application/json" },
        body: "{not json",
      },
      { path: `${base}/voters`, headers: { "X-API-Key": project.embedKey } },
    ];
    for (const call of calls) {
      const result = await request(call);
      expect(result.status, `${call.method ?? "GET"} ${call.path}`).toBeGreaterThan(0);
      // Minted anonymous tokens come back in the response: they are secrets too.
      const minted = /"anon_token":"([^"]+)"/.exec(result.text)?.[1];
      if (minted) used.push(minted);
    }
    return { used, count: calls.length };
  }

  it("the server child's stdout holds request lines but no key, token or secret", async () => {
    const { used, count } = await exercise(
      (init) =>
        send(stack.server.origin, { ...init, headers: { ...(init.body ? { "Content-Type": "application/json" } : {}), ...init.headers } }),
      { slug, secretKey, embedKey, anon, featureId, ssoSecret: SSO_SECRET },
    );
    await new Promise((resolve) => setTimeout(resolve, 200)); // let the last lines arrive
    const log = stack.server.output();
    expect(stack.server.logRecords().filter((r) => r.msg === "request").length).toBeGreaterThanOrEqual(count);
    expectNoSecrets(log, [...secrets, ...used]);
    recordCount("hostile", "secrets kept out of the server log", secrets.length + used.length);
  });

  it("an in-process app logging at trace level, without redaction, is handed no secret either", async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    const ctx = await createTestContext();
    try {
      const inProcessAnon = `anon-inproc-${Date.now()}-secret`;
      const ssoSecret = `inproc-sso-${Date.now()}-secret-0123456789`;
      const project = await ctx.importProject({
        project: { sso_secret: ssoSecret },
        voters: [{ ref: "v", kind: "anonymous", anon_token: inProcessAnon }],
        features: [{ ref: "f", board: "roadmap", column: "c-open", heading: "Logs", description: "Trace" }],
      });
      const logger = pino({ level: "trace" }, destination);
      const app = createApp({ ...ctx.deps, logger });
      const dead = await openDatabase({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/nothing", poolSize: 1 });
      const failing = createApp({ ...ctx.deps, db: dead.db, logger });
      const { used } = await exercise(
        async (init) => {
          const response = await app.request(init.path, {
            method: init.method ?? "GET",
            headers: { ...(init.body ? { "Content-Type": "application/json" } : {}), ...init.headers },
            body: init.body,
          });
          return { status: response.status, text: await response.text() };
        },
        {
          slug: project.slug,
          secretKey: project.secretKey,
          embedKey: project.embedKey,
          anon: inProcessAnon,
          featureId: idsOf(project).features.f,
          ssoSecret,
        },
      );
      // A 500 from the driver is logged with its error: still nothing secret in it.
      const crashed = await failing.request(`/api/v3/projects/${project.slug}/features`, {
        headers: { "X-API-Key": project.secretKey, "X-VF-Anon": inProcessAnon },
      });
      expect(crashed.status).toBe(500);
      await dead.close();
      const log = lines.join("");
      expect(log).toMatch(/"msg":"request"/);
      expect(log).toMatch(/"msg":"unhandled error"/);
      expectNoSecrets(log, [project.secretKey, project.embedKey, inProcessAnon, ssoSecret, ...used]);
      recordCount("hostile", "secrets never handed to the logger (in process, trace level)", 4 + used.length);
    } finally {
      await ctx.close();
    }
  });
});
