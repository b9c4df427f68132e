/**
 * Reading Canny's API (imports-v3.md, "Sources", Canny; import-formats.md §2) against a fake
 * Canny on 127.0.0.1: POST with the key in every body, v1 skip/limit paging over several pages,
 * v2 cursor paging, a 429 with Retry-After honoured, at most five requests in any second (the
 * fake's own arrival times), the SSRF guard of webhooks in the way unless private addresses are
 * allowed (as WEBHOOK_ALLOW_PRIVATE_URLS=true does for webhook tests), and the key in no error.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGuardedFetch, fetchCannyExport, ImportSourceError, readImportFile } from "./index.ts";

const KEY = "sk_canny_test_5f1e2d3c4b5a";

interface Seen {
  path: string;
  at: number;
  body: Record<string, unknown>;
}

const posts = Array.from({ length: 230 }, (_, i) => ({
  id: `p${i}`,
  title: `Post ${i}`,
  details: "",
  board: { id: "b1", name: "Ideas" },
  author: { id: `u${i % 7}`, name: `User ${i % 7}`, email: null, isAdmin: false, userID: null },
  created: "2024-01-01T00:00:00.000Z",
  status: "open",
  tags: [],
  imageURLs: [],
  mergeHistory: [],
}));
const comments = Array.from({ length: 5 }, (_, i) => ({
  id: `c${i}`,
  post: { id: "p0" },
  author: { id: "u1" },
  value: `comment ${i}`,
  parentID: null,
  created: "2024-01-01T00:00:00.000Z",
}));

let server: Server;
let base: string;
const seen: Seen[] = [];
let throttledOnce = false;

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    // The arrival time, taken before the body is read.
    const at = Date.now();
    const body = await readBody(req);
    const path = (req.url ?? "").replace(/^\/api/, "");
    seen.push({ path, at, body });
    const send = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(value));
    };
    if (req.method !== "POST") return send(405, { error: "POST only" });
    if (body.apiKey !== KEY) return send(401, { error: `invalid api key ${String(body.apiKey)}` });
    const skip = Number(body.skip ?? 0);
    const limit = Number(body.limit ?? 10);
    const page = <T>(list: T[], key: string) => send(200, { [key]: list.slice(skip, skip + limit), hasMore: skip + limit < list.length });
    switch (path) {
      case "/v1/boards/list":
        return send(200, { boards: [{ id: "b1", name: "Ideas" }] });
      case "/v1/posts/list":
        // Canny caps pages; this fake serves 100 at most, as asked.
        return page(posts, "posts");
      case "/v1/votes/list":
        if (!throttledOnce) {
          throttledOnce = true;
          return send(429, { error: "slow down" }, { "retry-after": "1" });
        }
        return page([{ post: { id: "p1" }, voter: { id: "u2" }, created: "2024-01-02T00:00:00Z" }], "votes");
      case "/v2/comments/list": {
        // Two items a page, cursors "2" and "4".
        const at = typeof body.cursor === "string" ? Number(body.cursor) : 0;
        const next = at + 2 < comments.length ? String(at + 2) : null;
        return send(200, { items: comments.slice(at, at + 2), cursor: next, hasNextPage: next !== null });
      }
      case "/v2/users/list":
        return send(
          200,
          body.cursor
            ? { users: [{ id: "u9", name: "Late", email: "late@example.com" }], cursor: null, hasNextPage: false }
            : {
                users: [{ id: "u1", name: "First", email: "first@example.com", isAdmin: true, userID: "ext-1" }],
                cursor: "next",
                hasNextPage: true,
              },
        );
      default:
        return page([], path.split("/")[2] ?? "items");
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});

afterAll(() => {
  server.close();
});

describe("fetchCannyExport", () => {
  it("pages every list, honours 429, keeps to five requests a second, and reads back through the Canny reader", async () => {
    const requests: string[] = [];
    const zip = await fetchCannyExport({
      apiKey: KEY,
      baseUrl: base,
      fetch: createGuardedFetch({ allowPrivate: true }),
      onRequest: ({ endpoint, page }) => requests.push(`${endpoint}#${page}`),
    });
    // Every request a POST carrying the key.
    expect(seen.every((request) => request.body.apiKey === KEY)).toBe(true);
    // posts: three pages of skip/limit; comments: three cursor pages; users: two.
    expect(seen.filter((r) => r.path === "/v1/posts/list").map((r) => [r.body.skip, r.body.limit])).toEqual([
      [0, 100],
      [100, 100],
      [200, 100],
    ]);
    expect(seen.filter((r) => r.path === "/v2/comments/list").map((r) => r.body.cursor ?? null)).toEqual([null, "2", "4"]);
    expect(seen.filter((r) => r.path === "/v2/users/list").map((r) => r.body.cursor ?? null)).toEqual([null, "next"]);
    // The 429 was retried after its Retry-After second.
    const votes = seen.filter((r) => r.path === "/v1/votes/list");
    expect(votes).toHaveLength(2);
    expect(votes[1]!.at - votes[0]!.at).toBeGreaterThanOrEqual(1000);
    // No six requests within one second, by the server's clock.
    for (let i = 5; i < seen.length; i += 1) expect(seen[i]!.at - seen[i - 5]!.at).toBeGreaterThanOrEqual(1000);
    expect(requests[0]).toBe("/v1/boards/list#1");

    const data = await readImportFile({ source: "canny", file: zip, fileName: null });
    expect(data.features).toHaveLength(230);
    expect(data.comments).toHaveLength(5);
    expect(data.votes).toHaveLength(1);
    expect(data.people.find((p) => p.sourceId === "u1")).toMatchObject({ name: "First", role: "editor", ssoId: "ext-1" });
    expect(data.people.some((p) => p.sourceId === "u9")).toBe(true);
    expect(JSON.stringify(data)).not.toContain(KEY);
  }, 30_000);

  it("names api_key on Canny's error answer and never shows the key", async () => {
    const wrong = `${KEY}-wrong`;
    const error = await fetchCannyExport({ apiKey: wrong, baseUrl: base, fetch: createGuardedFetch({ allowPrivate: true }) }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ImportSourceError);
    expect((error as ImportSourceError).field).toBe("api_key");
    expect((error as Error).message).toContain("HTTP 401");
    expect((error as Error).message).not.toContain(wrong);
    expect((error as Error).message).not.toContain(KEY);
  });

  it("is refused by the address guard on a loopback address unless private addresses are allowed", async () => {
    const before = seen.length;
    const error = await fetchCannyExport({ apiKey: KEY, baseUrl: base, fetch: createGuardedFetch({ allowPrivate: false }) }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ImportSourceError);
    expect((error as Error).message).toContain("not allowed");
    expect((error as Error).message).not.toContain(KEY);
    expect(seen.length).toBe(before);
  });
});
