/**
 * Hostile values (OWASP API4 unrestricted resource consumption, API8 security misconfiguration):
 * query parameters at their bounds and beyond, SQL and Unicode in every text field (stored and
 * returned verbatim), bodies over one megabyte however they are framed (413 too_large before any
 * handler, nothing created), and 500s that show nothing of the inside. In process.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/connect.ts";
import { createApp } from "../../src/app.ts";
import { createLogger } from "../../src/deps.ts";
import { createTestContext, type ImportedProject, type TestContext } from "../support/harness.ts";
import { expectEnvelope, expectError, expectNoLeak } from "./support/assertions.ts";
import { idsOf } from "./support/seed.ts";
import { recordCount } from "./support/tally.ts";

let ctx: TestContext;
let p: ImportedProject;
let ids: any;
const anon = `anon-input-${Date.now()}-000001`;
const MB = 1024 * 1024;

beforeAll(async () => {
  ctx = await createTestContext();
  p = await ctx.importProject({
    voters: [{ ref: "v", kind: "anonymous", anon_token: anon, display_name: "Val" }],
    tags: [{ ref: "t", name: "UI" }],
    features: [{ ref: "f", board: "roadmap", column: "c-open", heading: "Bounds", description: "Limits", tags: ["t"] }],
    comments: [{ ref: "c", feature: "f", voter: "v", content: "First" }],
    releases: [{ ref: "r", name: "1.0", body: "Notes", published_at: "2026-01-01T00:00:00Z" }],
    messages: [{ ref: "m", title: "Hello", body: "World" }],
  });
  ids = idsOf(p);
});
afterAll(() => ctx.close());

const write = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  ctx.send(method, `/api/v3/projects/${p.slug}${path}`, p.secretKey, body, { "X-VF-Anon": anon, ...headers });

describe("query parameters at their bounds and beyond", () => {
  const lists = () => [
    `/api/v3/projects/${p.slug}/features`,
    `/api/v3/projects/${p.slug}/features/${ids.features.f}/comments`,
    `/api/v3/projects/${p.slug}/changelog`,
    `/api/v3/projects/${p.slug}/messages`,
    `/api/v3/projects/${p.slug}/voters`,
    `/api/v3/projects/${p.slug}/revenue/features`,
  ];
  const valid = ["per_page=1", "per_page=100", "page=1", "page=1000000", "page=2&per_page=100"];
  const invalid: [string, string][] = [
    ["per_page=0", "per_page"],
    ["per_page=101", "per_page"],
    ["per_page=-1", "per_page"],
    ["per_page=1.5", "per_page"],
    ["per_page=abc", "per_page"],
    ["per_page=1e309", "per_page"],
    ["per_page=99999999999999999999", "per_page"],
    ["page=0", "page"],
    ["page=-1", "page"],
    ["page=1000001", "page"],
    ["page=99999999999999999999", "page"],
    ["page=NaN", "page"],
    ["page=%00", "page"],
  ];

  it("answers 200 with consistent meta at the bounds of page and per_page on every list", async () => {
    for (const list of lists()) {
      for (const query of valid) {
        const response = await ctx.get(`${list}?${query}`, p.secretKey);
        expect(response.status, `${list}?${query}`).toBe(200);
        const body = await response.json();
        expectEnvelope(body);
        const { page, per_page, total, total_pages, has_more } = body.meta;
        expect(body.data.length).toBeLessThanOrEqual(per_page);
        expect(total_pages).toBe(Math.ceil(total / per_page));
        expect(has_more).toBe(page < total_pages);
      }
    }
  });

  it("answers 422 validation_failed naming the parameter beyond the bounds, never a 500", async () => {
    let refused = 0;
    for (const list of lists()) {
      for (const [query, field] of invalid) {
        const response = await ctx.get(`${list}?${query}`, p.secretKey);
        expect(response.status, `${list}?${query}`).toBe(422);
        const body = await response.json();
        expectError(422, body, "validation_failed");
        expect(body.error.field).toBe(field);
        refused++;
      }
    }
    recordCount("hostile", "page/per_page out of bounds refused", refused);
  });

  it("bounds tag, status and q on the features list", async () => {
    const list = `/api/v3/projects/${p.slug}/features`;
    const ok = [
      `tag=${ids.tags.t}`,
      `tag=${ids.tags.t}&tag=${ids.tags.t}`,
      "tag=2147483647",
      `${"tag=1&".repeat(200)}tag=2`,
      "status=open",
      "status=open&status=done&status=denied&status=archived",
      "q=",
      `q=${"a".repeat(200)}`,
      "q=%25",
      "q=_",
      "q=%5C",
      "q=%27%20OR%201%3D1%20--",
      "q=%E2%80%AE%F0%9F%91%A9%E2%80%8D%F0%9F%91%A9",
      "q=dark%20mode%3B%20DROP%20TABLE%20features",
    ];
    for (const query of ok) {
      const response = await ctx.get(`${list}?${query}`, p.secretKey);
      expect(response.status, query).toBe(200);
      expectEnvelope(await response.json());
    }
    const bad: [string, string][] = [
      ["tag=0", "tag"],
      ["tag=-1", "tag"],
      ["tag=abc", "tag"],
      ["tag=2147483648", "tag"],
      ["tag=1.5", "tag"],
      ["status=bogus", "status"],
      ["status=open&status=bogus", "status"],
      ["status=OPEN", "status"],
      [`q=${"a".repeat(201)}`, "q"],
      ["sort=random", "sort"],
      ["column=abc", "column"],
      ["scope=everything", "scope"],
    ];
    for (const [query, field] of bad) {
      const response = await ctx.get(`${list}?${query}`, p.secretKey);
      expect(response.status, query).toBe(422);
      const body = await response.json();
      expectError(422, body, "validation_failed");
      expect(body.error.field, query).toBe(field);
    }
    // The q filter matches literally: wildcards are not wildcards.
    const percent = await (await ctx.get(`${list}?q=%25`, p.secretKey)).json();
    expect(percent.data).toEqual([]);
    recordCount("hostile", "tag/status/q/sort out of bounds refused", bad.length);
  });

  it("never answers a hostile query value with a 500 (NUL, lone surrogates, huge ids)", async () => {
    const paths = [
      `/api/v3/projects/${p.slug}/features?q=%00`,
      `/api/v3/projects/${p.slug}/features?q=a%00b`,
      `/api/v3/projects/${p.slug}/features?q=%ED%A0%80`,
      `/api/v3/projects/${p.slug}/features?q=%FF%FE`,
      `/api/v3/projects/${p.slug}/features?board=%00`,
      `/api/v3/projects/${p.slug}/features?board=${"x".repeat(5000)}`,
      `/api/v3/projects/${p.slug}/features/99999999999999999999`,
      `/api/v3/projects/${p.slug}/features/2147483648`,
      `/api/v3/projects/${p.slug}/features/-1`,
      `/api/v3/projects/${p.slug}/features/1e3`,
      `/api/v3/projects/${p.slug}/features/%00`,
      `/api/v3/projects/${p.slug}/changelog/0`,
      `/api/v3/projects/${p.slug}/voters?customer_id=%00`,
      `/api/v3/projects/${p.slug}/voters?customer_id=${"c".repeat(5000)}`,
      `/api/v3/projects/${p.slug}/voters?feature_id=-5`,
      `/api/v3/projects/${p.slug}/voters?churned=maybe`,
      `/api/v3/projects/${p.slug}/messages?platform=windows`,
      `/api/v3/projects/${p.slug}/messages?app_version=not-a-version`,
      `/api/v3/projects/${p.slug}/messages?app_version=%00`,
      `/api/v3/projects/%00/features`,
      `/api/v3/projects/${"s".repeat(300)}/features`,
      `/api/v3/projects/..%2F..%2Fetc%2Fpasswd`,
      `/api/v3/projects/%E0%A4%A/features`,
      `/api/v3/projects/%ED%A0%80`,
      `/api/v3/projects/${p.slug}/features/%E0%A4%A`,
    ];
    const failures: string[] = [];
    for (const path of paths) {
      const response = await ctx.get(path, p.secretKey);
      if (response.status >= 500) failures.push(`${path} -> ${response.status}`);
      expectEnvelope(await response.json());
    }
    expect(failures).toEqual([]);
    recordCount("hostile", "hostile query and path values answered without a 500", paths.length);
  });
});

describe("SQL and Unicode in every text field", () => {
  const SAMPLES = [
    "Robert'); DROP TABLE features;--",
    "' OR '1'='1' /* */ UNION SELECT key_hash FROM api_keys --",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${x} is the payload: it must be stored verbatim
    "%_\\ LIKE wildcards \\% and $1 placeholders ${x} {{x}}",
    "𝕌𝕟𝕚𝕔𝕠𝕕𝕖 👩‍👩‍👧 ZWJ, e\u0301 NFD, é NFC, ﬁ ligature, 中文, العربية \u202eRTL override\u202c",
    "zero\u200bwidth\u200c\u200d\ufeff, tab\there, newline\nhere, CRLF\r\nhere",
    "<b>not markup</b> &amp; &lt;script&gt; \"quotes\" 'single' `back`",
  ];

  it("stores and returns suggestion headings and descriptions verbatim", async () => {
    for (const text of SAMPLES) {
      const created = await write("POST", "/features", { heading: text.slice(0, 254), description: text });
      expect(created.status, text).toBe(201);
      const data = (await created.json()).data;
      expect(data.heading).toBe(text.slice(0, 254));
      expect(data.description).toBe(text);
      const again = await ctx.get(`/api/v3/projects/${p.slug}/features/${data.id}`, p.secretKey, { "X-VF-Anon": anon });
      const fetched = (await again.json()).data;
      expect(fetched.heading).toBe(text.slice(0, 254));
      expect(fetched.description).toBe(text);
    }
    recordCount("hostile", "SQL/Unicode suggestion stored verbatim", SAMPLES.length);
  });

  it("stores and returns comment content verbatim", async () => {
    for (const text of SAMPLES) {
      const created = await write("POST", `/features/${ids.features.f}/comments`, { content: text });
      expect(created.status, text).toBe(201);
      const data = (await created.json()).data;
      expect(data.content).toBe(text);
    }
    const listed = await (await ctx.get(`/api/v3/projects/${p.slug}/features/${ids.features.f}/comments?per_page=100`, p.secretKey)).json();
    for (const text of SAMPLES) expect(listed.data.map((c: { content: string }) => c.content)).toContain(text);
    recordCount("hostile", "SQL/Unicode comment stored verbatim", SAMPLES.length);
  });

  it("finds SQL and Unicode text through q, literally", async () => {
    for (const text of [SAMPLES[0]!, "𝕌𝕟𝕚𝕔𝕠𝕕𝕖", "%_\\ LIKE"]) {
      const response = await ctx.get(`/api/v3/projects/${p.slug}/features?q=${encodeURIComponent(text)}&per_page=100`, p.secretKey);
      expect(response.status).toBe(200);
      expectEnvelope(await response.json());
    }
  });

  it("refuses text Postgres cannot store (NUL) or that is not Unicode with a 4xx, never a 500", async () => {
    const bodies = [
      ["/features", '{"heading":"nul \\u0000 inside","description":"x"}'],
      ["/features", '{"heading":"ok","description":"nul \\u0000 inside"}'],
      ["/features", '{"heading":"lone \\ud800 surrogate","description":"x"}'],
      [`/features/${ids.features.f}/comments`, '{"content":"nul \\u0000 inside"}'],
      [`/features/${ids.features.f}/comments`, '{"content":"lone \\udfff surrogate"}'],
      ["/identity", '{"anon_token":"nul \\u0000 inside"}'],
      ["/identity", '{"sso_token":"nul \\u0000 inside"}'],
    ] as const;
    const failures: string[] = [];
    for (const [path, body] of bodies) {
      const response = await write("POST", path, body);
      if (response.status >= 500) failures.push(`${path} ${body} -> ${response.status}`);
      expectEnvelope(await response.json());
    }
    expect(failures).toEqual([]);
    recordCount("hostile", "NUL / lone surrogate text answered without a 500", bodies.length);
  });

  it("bounds the text lengths at the contract's limits", async () => {
    const cases: [string, unknown, string][] = [
      ["/features", { heading: "h".repeat(255), description: "d" }, "heading"],
      ["/features", { heading: "h", description: "d".repeat(2001) }, "description"],
      ["/features", { heading: "", description: "d" }, "heading"],
      ["/features", { heading: 5, description: "d" }, "heading"],
      ["/features", { description: "d" }, "heading"],
      [`/features/${ids.features.f}/comments`, { content: "c".repeat(2001) }, "content"],
      [`/features/${ids.features.f}/comments`, { content: "" }, "content"],
      [`/features/${ids.features.f}/comments`, { content: "reply", parent_id: "x" }, "parent_id"],
    ];
    for (const [path, body, field] of cases) {
      const response = await write("POST", path, body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      const json = await response.json();
      expectError(422, json, "validation_failed");
      expect(json.error.field).toBe(field);
    }
    const atLimit = await write("POST", "/features", { heading: "h".repeat(254), description: "d".repeat(2000) });
    expect(atLimit.status).toBe(201);
    recordCount("hostile", "over-long or mistyped text fields refused", cases.length);
  });
});

describe("request bodies over one megabyte", () => {
  const commentPath = () => `/api/v3/projects/${p.slug}/features/${ids.features.f}/comments`;
  const commentCount = async () =>
    (await ctx.db.selectFrom("comments").select("id").where("feature_id", "=", ids.features.f).execute()).length;
  const padded = (size: number) => {
    const prefix = '{"content":"x","pad":"';
    return `${prefix + "a".repeat(size - prefix.length - 2)}"}`;
  };
  const headers = (extra: Record<string, string> = {}) => ({
    "X-API-Key": p.secretKey,
    "X-VF-Anon": anon,
    "Content-Type": "application/json",
    ...extra,
  });

  function stream(total: number, chunk = 64 * 1024): ReadableStream<Uint8Array> {
    let sent = 0;
    const piece = new TextEncoder().encode("a".repeat(chunk));
    return new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"content":"'));
        sent = 12;
      },
      pull(controller) {
        if (sent >= total) return controller.close();
        const n = Math.min(chunk, total - sent);
        controller.enqueue(n === chunk ? piece : piece.slice(0, n));
        sent += n;
      },
    });
  }

  async function expectTooLarge(response: Response) {
    expect(response.status).toBe(413);
    expectError(413, await response.json(), "too_large");
  }

  it("refuses 1 MB + 1 byte with Content-Length, and takes exactly 1 MB to validation", async () => {
    const before = await commentCount();
    await expectTooLarge(await ctx.app.request(commentPath(), { method: "POST", headers: headers(), body: padded(MB + 1) }));
    await expectTooLarge(
      await ctx.app.request(commentPath(), { method: "POST", headers: headers({ "Idempotency-Key": "big-1" }), body: padded(MB + 1) }),
    );
    const exact = await ctx.app.request(commentPath(), { method: "POST", headers: headers(), body: padded(MB) });
    expect(exact.status).not.toBe(413);
    expect(exact.status).toBeLessThan(500);
    expect(await commentCount()).toBe(before + (exact.status === 201 ? 1 : 0));
    recordCount("hostile", "body of 1 MB + 1 byte refused", 2);
  });

  it("refuses a chunked body without Content-Length once it passes 1 MB (a ReadableStream body)", async () => {
    const before = await commentCount();
    for (const extra of [{}, { "Idempotency-Key": "big-stream" }] as Record<string, string>[]) {
      const response = await ctx.app.request(commentPath(), {
        method: "POST",
        headers: headers(extra),
        body: stream(MB + 1),
        duplex: "half",
      } as RequestInit);
      await expectTooLarge(response);
    }
    expect(await commentCount()).toBe(before);
    recordCount("hostile", "chunked body over 1 MB refused", 2);
  });

  it("refuses conflicting framing: a small Content-Length over a chunked body, and a declared size over 1 MB", async () => {
    const before = await commentCount();
    const conflicting = await ctx.app.request(commentPath(), {
      method: "POST",
      headers: headers({ "Content-Length": "20", "Transfer-Encoding": "chunked" }),
      body: stream(2 * MB),
      duplex: "half",
    } as RequestInit);
    await expectTooLarge(conflicting);
    const declared = await ctx.app.request(commentPath(), {
      method: "POST",
      headers: headers({ "Content-Length": String(MB + 1) }),
      body: '{"content":"small"}',
    });
    await expectTooLarge(declared);
    expect(await commentCount()).toBe(before);
    recordCount("hostile", "conflicting body framing refused", 2);
  });

  it("refuses an oversized body before any key check is bypassed, on every write route", async () => {
    const routes = [
      ["POST", `/api/v3/projects/${p.slug}/features`],
      ["POST", `/api/v3/projects/${p.slug}/identity`],
      ["POST", `/api/v3/projects/${p.slug}/features/${ids.features.f}/vote`],
      ["DELETE", `/api/v3/projects/${p.slug}/comments/${ids.comments.c}`],
      ["POST", `/api/v3/projects/${p.slug}/comments/${ids.comments.c}/like`],
      ["POST", `/api/v3/projects/${p.slug}/messages/${ids.messages.m}/dismiss`],
    ];
    for (const [method, path] of routes) {
      await expectTooLarge(await ctx.app.request(path!, { method, headers: headers(), body: padded(MB + 1) }));
    }
    expect(await ctx.db.selectFrom("comments").select("id").where("id", "=", ids.comments.c).execute()).toHaveLength(1);
    expect(await ctx.db.selectFrom("comment_likes").select("voter_id").where("comment_id", "=", ids.comments.c).execute()).toHaveLength(0);
    expect(await ctx.db.selectFrom("votes").select("voter_id").where("feature_id", "=", ids.features.f).execute()).toHaveLength(0);
    recordCount("hostile", "oversized bodies on write routes refused", routes.length);
  });
});

describe("500s show nothing of the inside", () => {
  it("answers a database failure with the bare internal error and X-Request-Id", async () => {
    // An app whose database refuses connections: every query fails inside the driver.
    const dead = await openDatabase({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/nothing", poolSize: 1 });
    const app = createApp({ ...ctx.deps, db: dead.db, logger: createLogger("silent") });
    const responses = [
      await app.request(`/api/v3/projects/${p.slug}/features`, { headers: { "X-API-Key": p.secretKey } }),
      await app.request(`/api/v3/projects/${p.slug}/identity`, { method: "POST", headers: { "X-API-Key": p.secretKey } }),
      await app.request(`/api/v3/board`, { headers: { "X-API-Key": p.embedKey } }),
    ];
    await dead.close();
    for (const response of responses) {
      expect(response.status).toBe(500);
      expect(response.headers.get("X-Request-Id")).toMatch(/.+/);
      expectNoLeak(await response.text());
    }
  });
});
