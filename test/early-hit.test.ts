/**
 * The hit path before the app (src/middleware/early-hit.ts) against the app's own hit path, over
 * real HTTP on the storage set-up the environment names: two servers (createServer) on the same
 * deps, so on the same caches and budgets, one answering hits early and one sending everything
 * through the app. Every kind of hit gets the same status, headers (in the same order) and body
 * from both; each request is counted once whichever path answers it; what the early path must
 * not answer (a stale entry after a write, an owner's change, a spent budget, a refused key) is
 * answered by the app.
 */
import { randomBytes } from "node:crypto";
import { Agent, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenedDeps } from "../src/deps.ts";
import { type BoardServer, createServer } from "../src/http-server.ts";
import { createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";

interface Answer {
  status: number;
  /** Header name/value pairs in the order they came. */
  raw: string[];
  headers: IncomingHttpHeaders;
  body: string;
}

const agent = new Agent({ keepAlive: true });

function get(base: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode!, raw: res.rawHeaders, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/** The answer's header pairs in order, without Date, the remaining budget's value and (unless kept) the request id. */
function comparable(answer: Answer, keepRequestId = true): string[][] {
  const pairs: string[][] = [];
  for (let i = 0; i < answer.raw.length; i += 2) {
    const name = answer.raw[i]!.toLowerCase();
    if (name === "date" || (!keepRequestId && name === "x-request-id")) continue;
    pairs.push([answer.raw[i]!, name === "x-ratelimit-remaining" ? "n" : answer.raw[i + 1]!]);
  }
  return pairs;
}

interface Pair {
  ctx: TestContext;
  early: BoardServer;
  plain: BoardServer;
  earlyBase: string;
  plainBase: string;
  /** Calls of the rate limiter's counting round trip so far. */
  counts: () => number;
  close(): Promise<void>;
}

/** Two servers on one test context's deps: early hits on, and off. */
async function startPair(config: Record<string, string> = {}): Promise<Pair> {
  const ctx = await createTestContext({ PORT: "0", HOST: "127.0.0.1", WEBHOOK_WORKER: "off", ...config });
  let counts = 0;
  const consume = ctx.deps.rateLimiter.consumeReadingRevisions.bind(ctx.deps.rateLimiter);
  ctx.deps.rateLimiter = Object.assign(Object.create(ctx.deps.rateLimiter), {
    consumeReadingRevisions: (...args: Parameters<typeof consume>) => {
      counts++;
      return consume(...args);
    },
  });
  // The context closes the deps; the servers share them.
  const deps = () => ({ ...ctx.deps, databaseCreated: false, close: async () => {} }) as OpenedDeps;
  const early = createServer(deps());
  const plain = createServer(deps(), { earlyHits: false });
  const earlyBase = `http://127.0.0.1:${(await early.start()).port}`;
  const plainBase = `http://127.0.0.1:${(await plain.start()).port}`;
  return {
    ctx,
    early,
    plain,
    earlyBase,
    plainBase,
    counts: () => counts,
    async close() {
      await early.stop();
      await plain.stop();
      await ctx.close();
    },
  };
}

let pair: Pair;
let p: ImportedProject;
const origin = "https://allowed.example";
// Anonymous tokens are unique across projects.
const ada = { "X-VF-Anon": `anon-ada-${randomBytes(8).toString("hex")}` };

beforeAll(async () => {
  pair = await startPair();
  p = await pair.ctx.importProject({
    voters: [{ ref: "ada", anon_token: ada["X-VF-Anon"] }],
    features: [
      { ref: "f1", board: "roadmap", column: "c-open", heading: "First" },
      { ref: "f2", board: "roadmap", column: "c-open", heading: "Second" },
    ],
    comments: [{ ref: "c", feature: "f1", voter: "ada", content: "a comment" }],
  });
});
afterAll(async () => {
  agent.destroy();
  await pair.close();
});

/**
 * Asks both servers for `path` (the early one first) after one read through the app filled the
 * cache; expects the early one to answer it before the app, the other through the app, each
 * counted once, and the two answers the same. Returns the early one's.
 */
async function compareHit(path: string, headers: Record<string, string>, sameRequestId = true): Promise<Answer> {
  const stats = pair.ctx.deps.caches.readStats;
  expect((await get(pair.plainBase, path, headers)).status).toBeLessThan(400);
  const before = { early: stats.early, hits: stats.hits, counts: pair.counts() };
  const early = await get(pair.earlyBase, path, headers);
  expect([stats.early - before.early, stats.hits - before.hits, pair.counts() - before.counts]).toEqual([1, 1, 1]);
  const viaApp = await get(pair.plainBase, path, headers);
  expect([stats.early - before.early, stats.hits - before.hits, pair.counts() - before.counts]).toEqual([1, 2, 2]);
  expect(early.status).toBe(viaApp.status);
  expect(early.body).toBe(viaApp.body);
  expect(comparable(early, sameRequestId)).toEqual(comparable(viaApp, sameRequestId));
  // Both counted against the same budget, once each.
  expect(Number(early.headers["x-ratelimit-remaining"]) - Number(viaApp.headers["x-ratelimit-remaining"])).toBe(1);
  return early;
}

describe("hits answered before the app", () => {
  it("carry the app's status, headers in order, and body: 200, 304, CORS, request ids", async () => {
    pair.ctx.clock.pinInsideWindow();
    try {
      const base = `/api/v3/projects/${p.slug}`;
      const paths = [
        base,
        `${base}/features?sort=top`,
        `${base}/features/${p.ids.ids.features.f1}`,
        `${base}/features/${p.ids.ids.features.f1}/comments`,
        `${base}/changelog`,
        "/api/v3/board",
      ];
      for (const path of paths) {
        const secret = { "X-API-Key": p.secretKey, "X-Request-Id": `same-${path.length}` };
        const first = await compareHit(path, secret);
        expect(first.status).toBe(200);
        expect(first.headers["cache-control"]).toBe("private, max-age=60");
        expect(first.headers["x-request-id"]).toBe(secret["X-Request-Id"]);
        const etag = first.headers.etag!;
        expect((await compareHit(path, { ...secret, "If-None-Match": etag })).status).toBe(304);
        expect((await compareHit(path, { ...secret, "If-None-Match": `"other", ${etag}` })).status).toBe(304);
        expect((await compareHit(path, { ...secret, "If-None-Match": "*" })).status).toBe(304);
        expect((await compareHit(path, { ...secret, "If-None-Match": '"other"' })).status).toBe(200);
        const embed = { "X-API-Key": p.embedKey, Origin: origin, "X-Request-Id": "cors-1" };
        const cors = await compareHit(path, embed);
        expect(cors.headers["access-control-allow-origin"]).toBe(origin);
        // An id outside the rule: each side makes its own.
        const own = await compareHit(path, { "X-API-Key": p.secretKey, "X-Request-Id": "not an id" }, false);
        expect(own.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
      }
    } finally {
      pair.ctx.clock.release();
    }
  });

  it("a request counted early and then found stale or changed is answered by the app, counted once", async () => {
    const stats = pair.ctx.deps.caches.readStats;
    const f2 = p.ids.ids.features.f2;
    const detail = `/api/v3/projects/${p.slug}/features/${f2}`;
    const key = { "X-API-Key": p.secretKey };
    pair.ctx.clock.pinInsideWindow();
    try {
      await get(pair.plainBase, detail, key);
      const hit = await get(pair.earlyBase, detail, key);
      const remaining = Number(hit.headers["x-ratelimit-remaining"]);
      // A vote retires the feature's detail: the early path counts the read, finds the entry stale.
      expect((await pair.ctx.send("POST", `${detail}/vote`, p.secretKey, undefined, ada)).status).toBe(200);
      let before = { early: stats.early, counts: pair.counts() };
      const rebuilt = await get(pair.earlyBase, detail, key);
      expect(JSON.parse(rebuilt.body).data.vote_count).toBe(1);
      expect([stats.early - before.early, pair.counts() - before.counts]).toEqual([0, 1]);
      expect(Number(rebuilt.headers["x-ratelimit-remaining"])).toBe(remaining - 1);
      // An owner's change (new lookups revision): the app checks the key again and rebuilds.
      await pair.ctx.announceAdminChange(p.slug);
      before = { early: stats.early, counts: pair.counts() };
      const afterChange = await get(pair.earlyBase, detail, key);
      expect(afterChange.status).toBe(200);
      expect([stats.early - before.early, pair.counts() - before.counts]).toEqual([0, 1]);
      expect(Number(afterChange.headers["x-ratelimit-remaining"])).toBe(remaining - 2);
      // And the next read is an early hit again.
      before = { early: stats.early, counts: pair.counts() };
      const again = await get(pair.earlyBase, detail, key);
      expect(again.body).toBe(afterChange.body);
      expect([stats.early - before.early, pair.counts() - before.counts]).toEqual([1, 1]);
      expect(Number(again.headers["x-ratelimit-remaining"])).toBe(remaining - 3);
    } finally {
      pair.ctx.clock.release();
    }
  });

  it("refused keys are the app's answers, uncounted", async () => {
    const other = await pair.ctx.importProject();
    const board = `/api/v3/projects/${p.slug}`;
    await get(pair.plainBase, board, { "X-API-Key": p.secretKey });
    await get(pair.plainBase, `/api/v3/projects/${other.slug}`, { "X-API-Key": other.secretKey });
    const stats = pair.ctx.deps.caches.readStats;
    const cases: [Record<string, string>, number, string][] = [
      [{ "X-API-Key": p.embedKey, Origin: "https://elsewhere.example" }, 403, "origin_not_allowed"],
      [{ "X-API-Key": other.secretKey }, 403, "key_wrong_project"],
      [{ "X-API-Key": "fb_sk_no_such_key" }, 401, "invalid_key"],
      [{ "X-API-Key": " " }, 401, "missing_key"],
    ];
    for (const [headers, status, code] of cases) {
      const before = { early: stats.early, counts: pair.counts() };
      const early = await get(pair.earlyBase, board, { ...headers, "X-Request-Id": "refused" });
      const viaApp = await get(pair.plainBase, board, { ...headers, "X-Request-Id": "refused" });
      expect([early.status, JSON.parse(early.body).error.code]).toEqual([status, code]);
      expect(early.body).toBe(viaApp.body);
      expect(comparable(early)).toEqual(comparable(viaApp));
      expect([stats.early - before.early, pair.counts() - before.counts]).toEqual([0, 0]);
    }
  });
});

describe("a spent budget", () => {
  let limited: Pair;
  beforeAll(async () => {
    limited = await startPair({ RATE_LIMIT_READS_PER_MINUTE: "3" });
  });
  afterAll(() => limited.close());

  it("is the app's 429 with the rate headers, each request counted once", async () => {
    const { slug, secretKey } = await limited.ctx.importProject();
    const board = `/api/v3/projects/${slug}`;
    const key = { "X-API-Key": secretKey, "X-Request-Id": "spent" };
    const stats = limited.ctx.deps.caches.readStats;
    limited.ctx.clock.pinInsideWindow();
    try {
      const answers = [await get(limited.plainBase, board, key)];
      for (let i = 0; i < 3; i++) answers.push(await get(limited.earlyBase, board, key));
      answers.push(await get(limited.plainBase, board, key));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429, 429]);
      expect(answers.map((a) => a.headers["x-ratelimit-remaining"])).toEqual(["2", "1", "0", "0", "0"]);
      expect(limited.counts()).toBe(5);
      expect(stats.early).toBe(2);
      expect(answers[3]!.body).toBe(answers[4]!.body);
      expect(comparable(answers[3]!)).toEqual(comparable(answers[4]!));
      expect(Number(answers[3]!.headers["retry-after"])).toBeGreaterThan(0);
    } finally {
      limited.ctx.clock.release();
    }
  });
});
