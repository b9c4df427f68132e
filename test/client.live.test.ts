/**
 * The TypeScript client (clients/typescript, docs/contract/clients-v3.md "The TypeScript client")
 * against the real server in process on 127.0.0.1 (src/http-server.ts), on the demo project:
 * typed public, voter and owner calls; errors as FeedbackBoardError with every field; safe
 * retries through a fault-injecting proxy (503, 429 with Retry-After, 409
 * idempotency_in_progress, a dropped connection) with one Idempotency-Key across attempts and no
 * retry of a 422; pagination; conditional reads; verifyWebhook on the server's own deliveries.
 */
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, FeedbackBoardError, verifyWebhook } from "../clients/typescript/src/index.ts";
import { importSnapshot } from "../src/admin/snapshot-import.ts";
import type { OpenedDeps } from "../src/deps.ts";
import { WebhookWorker } from "../src/events/webhook-worker.ts";
import { createServer } from "../src/http-server.ts";
import { createTestContext, demoSnapshotForTest, type TestContext } from "./support/harness.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver.ts";

let ctx: TestContext;
let server: ReturnType<typeof createServer>;
let baseUrl: string;
let slug: string;
let key: string;
let worker: WebhookWorker;
let receiver: WebhookReceiver;

beforeAll(async () => {
  ctx = await createTestContext({
    PORT: "0",
    HOST: "127.0.0.1",
    WEBHOOK_WORKER: "off",
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    WEBHOOK_POLL_INTERVAL_MS: "50",
  });
  const demo = demoSnapshotForTest();
  ({ slug, secretKey: key } = demo);
  await importSnapshot(ctx.db, demo.snapshot, {});
  await ctx.announceAdminChange(slug);
  // The context closes the deps; the server only borrows them.
  server = createServer({ ...ctx.deps, databaseCreated: false, close: async () => {} } as OpenedDeps);
  const address = await server.start();
  baseUrl = `http://127.0.0.1:${address.port}/api/v3`;
  receiver = await startWebhookReceiver();
  worker = new WebhookWorker({ db: ctx.db, config: ctx.deps.config, logger: ctx.deps.logger });
  await worker.start();
}, 120_000);

afterAll(async () => {
  await worker?.stop(0);
  await receiver?.close();
  await server?.stop();
  await ctx?.close();
});

/** The rejection of `promise` as a FeedbackBoardError (fails the test when it resolves). */
async function refusal(promise: Promise<unknown>): Promise<FeedbackBoardError> {
  const error = await promise.then(
    () => {
      throw new Error("expected a FeedbackBoardError, the call succeeded");
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(FeedbackBoardError);
  return error as FeedbackBoardError;
}

type Fault = "503" | "429" | "409" | "drop" | "pass";

/**
 * A proxy on 127.0.0.1 in front of the server: answers request n (from 0) by `script[n]`
 * ("pass" or past the script: forward), and records each request's method, path, headers and
 * the status the client got.
 */
async function startFaultProxy(target: string, script: Fault[], retryAfter = "1") {
  const seen: { method: string; path: string; headers: IncomingMessage["headers"]; status: number | "dropped" }[] = [];
  const upstream = new URL(target);
  const proxy: Server = createHttpServer((req, res) => {
    const fault = script[seen.length] ?? "pass";
    const record = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, status: 0 as number | "dropped" };
    seen.push(record);
    const json = (status: number, code: string, headers: Record<string, string> = {}) => {
      record.status = status;
      res.writeHead(status, { "Content-Type": "application/json", "X-Request-Id": `proxy-${seen.length}`, ...headers });
      res.end(JSON.stringify({ data: null, meta: null, error: { code, message: `injected ${status}`, field: null } }));
    };
    req.resume();
    if (fault === "drop") {
      record.status = "dropped";
      req.socket.destroy();
    } else if (fault === "503") json(503, "unavailable");
    else if (fault === "429") json(429, "rate_limited", { "Retry-After": retryAfter });
    else if (fault === "409") json(409, "idempotency_in_progress");
    else {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const forward = httpRequest(
          { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
          (answer) => {
            record.status = answer.statusCode ?? 0;
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        forward.on("error", () => res.destroy());
        forward.end(Buffer.concat(chunks));
      });
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const port = (proxy.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/api/v3`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}

/** A feature of the demo in a column that takes votes, and a fresh voter's anonymous token. */
async function votableFeatureAndVoter() {
  const client = createClient({ baseUrl, key });
  const board = await client.getProjectBoard({ path: { slug } });
  const column = board.data.boards[0]!.columns.find((candidate) => candidate.is_votable && candidate.id > 0)!;
  const features = await client.listFeatures({ path: { slug }, query: { column: column.id, per_page: 50 } });
  const identity = await client.resolveIdentity({ path: { slug } });
  return { features: features.data, anonToken: identity.data.anon_token! };
}

describe("typed calls", () => {
  it("reads public routes, writes as a voter and reads owner routes, each resolving to {data, meta}", async () => {
    const client = createClient({ baseUrl, key });
    const board = await client.getProjectBoard({ path: { slug } });
    expect(board.meta).toBeNull();
    expect(board.data.project.slug).toBe(slug);

    const page = await client.listFeatures({ path: { slug }, query: { sort: "top", per_page: 5 } });
    expect(page.data).toHaveLength(5);
    expect(page.meta).toMatchObject({ page: 1, per_page: 5, has_more: true });

    const { features, anonToken } = await votableFeatureAndVoter();
    const feature = features[0]!;
    client.setVoter({ anonToken });
    const vote = await client.castVote({ path: { slug, id: feature.id } });
    expect(vote.data).toMatchObject({ feature_id: feature.id, has_voted: true, vote_count: feature.vote_count! + 1 });
    expect((await client.getFeature({ path: { slug, id: feature.id } })).data.has_voted).toBe(true);
    client.setVoter(null);
    expect((await client.getFeature({ path: { slug, id: feature.id } })).data.has_voted).toBe(false);

    const voters = await client.adminListVoters({ path: { slug }, query: { per_page: 2, banned: false } });
    expect(voters.data.length).toBeGreaterThan(0);
    expect(voters.meta.total).toBeGreaterThanOrEqual(voters.data.length);
    const health = await client.getHealth();
    expect(health.data).toEqual({ status: "ok", version: "3" });
  });

  it("replays a write sent twice with the caller's idempotencyKey", async () => {
    const { features, anonToken } = await votableFeatureAndVoter();
    const client = createClient({ baseUrl, key, voter: { anonToken } });
    const idempotencyKey = `client-test-${Date.now()}`;
    const first = await client.castVote({ path: { slug, id: features[1]!.id }, idempotencyKey });
    const again = await client.castVote({ path: { slug, id: features[1]!.id }, idempotencyKey });
    expect(again.data).toEqual(first.data);
  });
});

describe("errors", () => {
  it("throws FeedbackBoardError with status, code, field, message, requestId and retryAfter", async () => {
    const client = createClient({ baseUrl, key });
    const missing = await refusal(client.getFeature({ path: { slug, id: 987_654_321 } }));
    expect(missing).toMatchObject({ status: 404, code: "not_found", field: null, retryAfter: null });
    expect(missing.message.length).toBeGreaterThan(0);
    expect(missing.requestId).toMatch(/^\S+$/);

    const invalid = await refusal(client.listFeatures({ path: { slug }, query: { per_page: 1000 } }));
    expect(invalid).toMatchObject({ status: 422, code: "validation_failed", field: "per_page", retryAfter: null });
    expect(invalid.requestId).toMatch(/^\S+$/);

    const unknownKey = createClient({ baseUrl, key: "fb_sk_no_such_key_000000000000000" });
    const unauthorized = await refusal(unknownKey.getProjectBoard({ path: { slug } }));
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.code).toMatch(/^[a-z_]+$/);
    expect(unauthorized.field).toBeNull();
    expect(unauthorized.requestId).toMatch(/^\S+$/);

    const noVoter = await refusal(client.castVote({ path: { slug, id: 1 } }));
    expect(noVoter).toMatchObject({ status: 401, code: "identity_required" });
  });

  it("throws status 0 and network_error when nothing answers, after its retries", async () => {
    const closed = await startFaultProxy(baseUrl, []);
    const deadUrl = closed.baseUrl;
    await closed.close();
    const client = createClient({ baseUrl: deadUrl, key, retry: { attempts: 1, maxDelayMs: 50 } });
    const error = await refusal(client.getHealth());
    expect(error).toMatchObject({ status: 0, code: "network_error", field: null, requestId: null, retryAfter: null });
    expect(error.message).toMatch(/network/);
  });
});

describe("retries", () => {
  it("retries a write after 503, a dropped connection and 409 idempotency_in_progress with one Idempotency-Key", async () => {
    const { features, anonToken } = await votableFeatureAndVoter();
    const feature = features[2]!;
    const proxy = await startFaultProxy(baseUrl, ["503", "drop", "409"]);
    try {
      const client = createClient({ baseUrl: proxy.baseUrl, key, voter: { anonToken }, retry: { maxDelayMs: 3000 } });
      const vote = await client.castVote({ path: { slug, id: feature.id } });
      expect(vote.data.vote_count).toBe(feature.vote_count! + 1);
      expect(proxy.seen.map((request) => request.status)).toEqual([503, "dropped", 409, 200]);
      const keys = new Set(proxy.seen.map((request) => request.headers["idempotency-key"]));
      expect(keys.size).toBe(1);
      expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await proxy.close();
    }
  });

  it("waits the Retry-After of a 429, and gives up at once when it would pass maxDelayMs", async () => {
    const proxy = await startFaultProxy(baseUrl, ["429"], "1");
    try {
      const client = createClient({ baseUrl: proxy.baseUrl, key, retry: { maxDelayMs: 2000 } });
      const started = Date.now();
      await client.getProjectBoard({ path: { slug } });
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(proxy.seen.map((request) => request.status)).toEqual([429, 200]);
    } finally {
      await proxy.close();
    }
    const patient = await startFaultProxy(baseUrl, ["429"], "30");
    try {
      const client = createClient({ baseUrl: patient.baseUrl, key, retry: { maxDelayMs: 1000 } });
      const error = await refusal(client.getProjectBoard({ path: { slug } }));
      expect(error).toMatchObject({ status: 429, code: "rate_limited", retryAfter: 30, requestId: "proxy-1" });
      expect(patient.seen).toHaveLength(1);
    } finally {
      await patient.close();
    }
  });

  it("stops after retry.attempts extra tries, and never retries a 422", async () => {
    const proxy = await startFaultProxy(baseUrl, ["503", "503", "503", "503", "503"]);
    try {
      const client = createClient({ baseUrl: proxy.baseUrl, key, retry: { attempts: 2, maxDelayMs: 3000 } });
      const error = await refusal(client.getHealth());
      expect(error).toMatchObject({ status: 503, code: "unavailable", requestId: "proxy-3" });
      expect(proxy.seen).toHaveLength(3);
    } finally {
      await proxy.close();
    }
    const { features, anonToken } = await votableFeatureAndVoter();
    const passing = await startFaultProxy(baseUrl, []);
    try {
      const client = createClient({ baseUrl: passing.baseUrl, key, voter: { anonToken }, retry: { maxDelayMs: 3000 } });
      const error = await refusal(client.createComment({ path: { slug, id: features[0]!.id }, body: { content: "" } }));
      expect(error).toMatchObject({ status: 422, code: "validation_failed", field: "content" });
      expect(passing.seen).toHaveLength(1);
    } finally {
      await passing.close();
    }
  });
});

describe("pagination and conditional reads", () => {
  it("paginate walks every page of a list operation", async () => {
    const client = createClient({ baseUrl, key });
    const first = await client.listFeatures({ path: { slug }, query: { sort: "new", per_page: 100 } });
    const seen: number[] = [];
    for await (const feature of client.paginate(client.listFeatures, { path: { slug }, query: { sort: "new", per_page: 4 } })) {
      seen.push(feature.id);
    }
    expect(first.meta.total).toBeGreaterThan(8);
    expect(seen).toEqual(first.data.map((feature) => feature.id));
  });

  it("etagCache sends If-None-Match and answers a 304 with the kept body", async () => {
    const proxy = await startFaultProxy(baseUrl, []);
    try {
      const client = createClient({ baseUrl: proxy.baseUrl, key, etagCache: true });
      const fresh = await client.getProjectBoard({ path: { slug } });
      const again = await client.getProjectBoard({ path: { slug } });
      expect(again).toEqual(fresh);
      expect(proxy.seen.map((request) => request.status)).toEqual([200, 304]);
      expect(proxy.seen[1]!.headers["if-none-match"]).toBeTruthy();
      const plain = createClient({ baseUrl: proxy.baseUrl, key });
      await plain.getProjectBoard({ path: { slug } });
      expect(proxy.seen[2]!.headers["if-none-match"]).toBeUndefined();
    } finally {
      await proxy.close();
    }
  });
});

describe("verifyWebhook", () => {
  it("verifies the server's own deliveries and returns the typed event; a changed body is refused", async () => {
    const client = createClient({ baseUrl, key });
    const webhook = await client.adminCreateWebhook({
      path: { slug },
      body: { url: `${receiver.url}/client`, events: ["vote.created"] },
    });
    const secret = webhook.data.secret;
    await client.adminTestWebhook({ path: { slug, webhook_id: webhook.data.id } });
    const { features, anonToken } = await votableFeatureAndVoter();
    await createClient({ baseUrl, key, voter: { anonToken } }).castVote({ path: { slug, id: features[3]!.id } });
    await receiver.waitFor(() => receiver.on("/client").length >= 2, 20_000);

    const types: string[] = [];
    for (const delivery of receiver.on("/client")) {
      const event = verifyWebhook(delivery.body, delivery.headers, secret);
      types.push(event.type);
      if (event.type === "vote.created") {
        expect(event.data.object.feature_id).toBe(features[3]!.id);
        expect(event.data.object.vote_count).toBe(features[3]!.vote_count! + 1);
      } else if (event.type === "ping") {
        expect(event.data.object.id).toBe(webhook.data.id);
      }
    }
    expect(types.sort()).toEqual(["ping", "vote.created"]);

    const delivery = receiver.on("/client")[0]!;
    expect(() => verifyWebhook(delivery.body.replace("}", ', "x": 1}'), delivery.headers, secret)).toThrow();
    expect(() => verifyWebhook(delivery.body, delivery.headers, `whsec_${Buffer.from("another secret").toString("base64")}`)).toThrow();
  });
});
