/**
 * Who may read the Atom feeds and how they are served (engagement-api-v3.md, "Feeds"): the embed
 * key as ?key= on these two routes only, a secret key there refused (and never logged), the
 * public reads' answers for the key and project (plan, private project, other project's key,
 * budget and rate headers, ETag/304), errors in the JSON envelope, a read after a write seeing
 * it, and the routes' OpenAPI description.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseAtom, readFeed } from "./support/feeds.fixture.ts";
import { body, createTestContext, type ErrorAnswer, type ImportedProject, type TestContext } from "./support/harness.ts";

const HOUR = 3_600_000;
const KINDS = ["changelog", "roadmap"] as const;
type Kind = (typeof KINDS)[number];

let ctx: TestContext;
let p: ImportedProject;
let other: ImportedProject;

beforeAll(async () => {
  ctx = await createTestContext();
  const seed = {
    features: [{ ref: "a", board: "roadmap", column: "c-planned", heading: "Alpha" }],
    releases: [
      { ref: "r", name: "1.0", slug: "1-0", body: "First", published_at: new Date(Date.now() - HOUR).toISOString(), features: [] },
    ],
  };
  p = await ctx.importProject(seed);
  other = await ctx.importProject(seed);
});
afterAll(async () => {
  await ctx.close();
});

const path = (project: ImportedProject, kind: Kind) => `/api/v3/projects/${project.slug}/${kind}.atom`;
const withKey = (project: ImportedProject, kind: Kind, key: string) => `${path(project, kind)}?key=${encodeURIComponent(key)}`;

/** Asserts a JSON envelope error answer with `status` and `code`. */
async function expectError(response: Response, status: number, code: string): Promise<void> {
  expect(response.status).toBe(status);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  const answer = await body<ErrorAnswer>(response);
  expect(answer).toMatchObject({ data: null, meta: null, error: { code } });
}

describe("keys", () => {
  it.each(KINDS)("%s: the embed key as ?key= works without any header", async (kind) => {
    const response = await ctx.app.request(withKey(p, kind, p.embedKey));
    const feed = await readFeed(response);
    expect(feed.id).toBe(`urn:feedback-board:${p.slug}:${kind}`);
    expect(response.headers.get("X-RateLimit-Limit")).toBeTruthy();
  });

  it.each(KINDS)("%s: the X-API-Key header works with either key", async (kind) => {
    for (const key of [p.secretKey, p.embedKey]) await readFeed(await ctx.get(path(p, kind), key));
  });

  it.each(KINDS)("%s: a secret key in the query is 401 invalid_key, with or without a valid header", async (kind) => {
    await expectError(await ctx.app.request(withKey(p, kind, p.secretKey)), 401, "invalid_key");
    await expectError(await ctx.get(withKey(p, kind, p.secretKey), p.embedKey), 401, "invalid_key");
    // Another project's secret key too: no secret key is taken from a URL.
    await expectError(await ctx.app.request(withKey(p, kind, other.secretKey)), 401, "invalid_key");
  });

  it.each(KINDS)("%s: with both, the header authorizes", async (kind) => {
    await readFeed(await ctx.get(withKey(p, kind, "not-a-key"), p.embedKey));
    await readFeed(await ctx.get(withKey(p, kind, other.embedKey), p.secretKey));
    await expectError(await ctx.get(withKey(p, kind, p.embedKey), "not-a-key"), 401, "invalid_key");
  });

  it.each(KINDS)("%s: no key, an empty one or an unknown one is 401", async (kind) => {
    await expectError(await ctx.app.request(path(p, kind)), 401, "missing_key");
    await expectError(await ctx.app.request(`${path(p, kind)}?key=`), 401, "missing_key");
    await expectError(await ctx.app.request(withKey(p, kind, "fb_ek_unknown")), 401, "invalid_key");
  });

  it.each(KINDS)("%s: another project's embed key is 403 key_wrong_project", async (kind) => {
    await expectError(await ctx.app.request(withKey(p, kind, other.embedKey)), 403, "key_wrong_project");
  });

  it.each(KINDS)("%s: the embed key from an origin off the allowlist is 403 origin_not_allowed", async (kind) => {
    await expectError(
      await ctx.app.request(withKey(p, kind, p.embedKey), { headers: { Origin: "https://elsewhere.example" } }),
      403,
      "origin_not_allowed",
    );
    const allowed = await ctx.app.request(withKey(p, kind, p.embedKey), { headers: { Origin: "https://allowed.example" } });
    expect(allowed.headers.get("Access-Control-Allow-Origin")).toBe("https://allowed.example");
    await readFeed(allowed);
  });

  it("?key= authenticates nowhere else: other routes answer as without it", async () => {
    const routes = [
      `/api/v3/projects/${p.slug}/changelog`,
      `/api/v3/projects/${p.slug}/features`,
      `/api/v3/projects/${p.slug}`,
      `/api/v3/projects/${p.slug}/admin/features`,
      "/api/v3/board",
    ];
    for (const route of routes) {
      for (const key of [p.embedKey, p.secretKey]) {
        await expectError(await ctx.app.request(`${route}?key=${encodeURIComponent(key)}`), 401, "missing_key");
      }
    }
    // With a header, the query parameter changes nothing (the public changelog's answer).
    const plain = await ctx.get(`/api/v3/projects/${p.slug}/changelog`, p.embedKey);
    const keyed = await ctx.get(`/api/v3/projects/${p.slug}/changelog?key=${encodeURIComponent(p.secretKey)}`, p.embedKey);
    expect(keyed.status).toBe(200);
    expect(await keyed.json()).toEqual(await plain.json());
  });
});

describe("project and plan", () => {
  it.each(KINDS)("%s: 404 not_found for a private project, 403 not_allowed below PRO", async (kind) => {
    const hidden = await ctx.importProject({ project: { is_private: true } });
    await expectError(await ctx.app.request(withKey(hidden, kind, hidden.embedKey)), 404, "not_found");
    await expectError(await ctx.get(path(hidden, kind), hidden.secretKey), 404, "not_found");
    const free = await ctx.importProject({ project: { plan: "free" } });
    await expectError(await ctx.app.request(withKey(free, kind, free.embedKey)), 403, "not_allowed");
    await expectError(await ctx.get(path(free, kind), free.secretKey), 403, "not_allowed");
  });

  it("405 for another method, in the envelope", async () => {
    const response = await ctx.send("POST", withKey(p, "changelog", p.embedKey), p.embedKey, {});
    expect(response.status).toBe(405);
    expect(response.headers.get("Allow")).toContain("GET");
  });
});

describe("caching", () => {
  it.each(KINDS)("%s: ETag and Cache-Control on 200, 304 with no body on a matching If-None-Match", async (kind) => {
    const first = await ctx.app.request(withKey(p, kind, p.embedKey));
    const etag = first.headers.get("ETag");
    expect(etag).toMatch(/^"[0-9a-f]{40}"$/);
    expect(first.headers.get("Cache-Control")).toBe("private, max-age=60");
    const text = await first.text();
    const again = await ctx.app.request(withKey(p, kind, p.embedKey), { headers: { "If-None-Match": etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    expect(again.headers.get("ETag")).toBe(etag);
    expect(again.headers.get("X-RateLimit-Remaining")).toBeTruthy();
    // The header-keyed read gets the same document and tag.
    const viaHeader = await ctx.get(path(p, kind), p.secretKey);
    expect(viaHeader.headers.get("ETag")).toBe(etag);
    expect(await viaHeader.text()).toBe(text);
  });

  it("a read after a write sees it: a status change, a release published now", async () => {
    const q = await ctx.importProject({ features: [{ ref: "a", board: "roadmap", column: "c-planned", heading: "Alpha" }] });
    const before = await Promise.all(KINDS.map((kind) => ctx.app.request(withKey(q, kind, q.embedKey))));
    const tags = before.map((response) => response.headers.get("ETag")!);
    expect(parseAtom(await before[1]!.text()).entries).toHaveLength(0);

    const patched = await ctx.send("PATCH", `/api/v3/projects/${q.slug}/admin/features/${q.ids.ids.features.a}`, q.secretKey, {
      status: "in_progress",
    });
    expect(patched.status).toBe(200);
    const roadmap = await ctx.app.request(withKey(q, "roadmap", q.embedKey), { headers: { "If-None-Match": tags[1]! } });
    expect((await readFeed(roadmap)).entries).toHaveLength(1);

    const created = await ctx.send("POST", `/api/v3/projects/${q.slug}/admin/releases`, q.secretKey, {
      name: "2.0",
      body: "Now",
      published_at: new Date(Date.now() - 1000).toISOString(),
    });
    expect(created.status).toBe(201);
    const changelog = await ctx.app.request(withKey(q, "changelog", q.embedKey), { headers: { "If-None-Match": tags[0]! } });
    expect((await readFeed(changelog)).entries.map((entry) => entry.title)).toEqual(["2.0"]);
  });

  it("a scheduled release enters the changelog feed at its time, with no write in between", async () => {
    const at = Date.now();
    const q = await ctx.importProject({
      releases: [{ ref: "s", name: "Scheduled", slug: "s", body: "Later", published_at: new Date(at + HOUR).toISOString(), features: [] }],
    });
    try {
      ctx.clock.pin(at);
      expect((await readFeed(await ctx.app.request(withKey(q, "changelog", q.embedKey)))).entries).toHaveLength(0);
      ctx.clock.pin(at + HOUR + 1000);
      expect((await readFeed(await ctx.app.request(withKey(q, "changelog", q.embedKey)))).entries.map((e) => e.title)).toEqual([
        "Scheduled",
      ]);
    } finally {
      ctx.clock.release();
    }
  });
});

describe("rate limit", () => {
  it("counts ?key= reads against the embed key's read budget: 429 rate_limited in the envelope", async () => {
    const limited = await createTestContext({ RATE_LIMIT_EMBED_READS_PER_MINUTE: "3" });
    try {
      const q = await limited.importProject({});
      limited.clock.pinInsideWindow();
      const url = withKey(q, "roadmap", q.embedKey);
      for (const remaining of ["2", "1"]) {
        const response = await limited.app.request(url);
        expect(response.status).toBe(200);
        expect(response.headers.get("X-RateLimit-Limit")).toBe("3");
        expect(response.headers.get("X-RateLimit-Remaining")).toBe(remaining);
      }
      // The header and the query spend the same key's budget.
      expect((await limited.get(path(q, "changelog"), q.embedKey)).headers.get("X-RateLimit-Remaining")).toBe("0");
      const refused = await limited.app.request(url);
      expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
      await expectError(refused, 429, "rate_limited");
    } finally {
      limited.clock.release();
      await limited.close();
    }
  });
});

describe("request log", () => {
  it("records the path without the query, so no key reaches the log", async () => {
    const info = vi.spyOn(ctx.deps.logger, "info");
    try {
      await ctx.app.request(withKey(p, "changelog", p.embedKey));
      await ctx.app.request(withKey(p, "roadmap", p.secretKey));
      const records = info.mock.calls.filter((call) => call[1] === "request").map((call) => call[0] as Record<string, unknown>);
      expect(records.map((record) => record.path)).toEqual([path(p, "changelog"), path(p, "roadmap")]);
      expect(records.map((record) => record.status)).toEqual([200, 401]);
      const logged = JSON.stringify(info.mock.calls);
      expect(logged).not.toContain(p.embedKey);
      expect(logged).not.toContain(p.secretKey);
    } finally {
      info.mockRestore();
    }
  });
});

describe("OpenAPI", () => {
  it("describes both routes: Atom answers as a string, the key header or ?key=, JSON errors", async () => {
    const document = await (await ctx.app.request("/api/v3/openapi.json")).json();
    expect(document.components.securitySchemes.EmbedKeyQuery).toMatchObject({ type: "apiKey", in: "query", name: "key" });
    for (const kind of KINDS) {
      const operation = document.paths[`/api/v3/projects/{slug}/${kind}.atom`].get;
      const ok = operation.responses["200"];
      const schema = ok.content["application/atom+xml"].schema;
      const resolved = schema.$ref ? document.components.schemas[schema.$ref.split("/").pop()] : schema;
      expect(resolved.type).toBe("string");
      expect(Object.keys(ok.content)).toEqual(["application/atom+xml"]);
      expect(Object.keys(ok.headers)).toEqual(expect.arrayContaining(["ETag", "Cache-Control", "X-RateLimit-Limit"]));
      expect(operation.responses["304"]).toBeDefined();
      for (const status of ["401", "403", "404", "429"]) {
        expect(Object.keys(operation.responses[status].content)).toEqual(["application/json"]);
      }
      expect(operation.security).toEqual([{ ApiKey: [] }, { EmbedKeyQuery: [] }]);
      expect(operation.parameters).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: "key", in: "query", required: false })]),
      );
    }
  });
});
