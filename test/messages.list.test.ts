/** GET /projects/{slug}/messages: MessageObject, targeting matrix, time window, order, paging, 422s. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Answer,
  body,
  createTestContext,
  type ErrorAnswer,
  type Ids,
  type ImportedProject,
  type TestContext,
} from "./support/harness.ts";

type Messages = Answer<"/api/v3/projects/{slug}/messages", "get">;

let ctx: TestContext;
let p: ImportedProject;
const idsOf = (project: ImportedProject): Ids => project.ids.ids ?? project.ids;
const HOUR = 3_600_000;
const at = (hours: number) => new Date(Date.now() + hours * HOUR).toISOString();

const message = (ref: string, priority: number, extra: Record<string, unknown> = {}) => ({
  ref,
  title: `Title ${ref}`,
  body: `Body ${ref}`,
  priority,
  ...extra,
});

beforeAll(async () => {
  ctx = await createTestContext();
  p = await ctx.importProject({
    messages: [
      message("all", 50, { created_at: at(-5) }),
      message("ios", 40, { platforms: ["ios"] }),
      message("mobile", 30, { platforms: ["ios", "macos"] }),
      message("range", 20, { min_app_version: "2.0.0", max_app_version: "3.0.0" }),
      message("min", 10, { min_app_version: "1.5.0" }),
      message("max", 5, { max_app_version: "1.0.0" }),
      message("ios-range", 3, { platforms: ["ios"], min_app_version: "2.0.0" }),
      message("current", 50, { starts_at: at(-2), ends_at: at(2), created_at: at(-1) }),
      message("future", 99, { starts_at: at(1) }),
      message("ended", 99, { ends_at: at(-1) }),
    ],
  });
});
afterAll(async () => {
  await ctx.close();
});

async function refsFor(query: string): Promise<string[]> {
  const response = await ctx.get(`/api/v3/projects/${p.slug}/messages${query}`, p.secretKey);
  expect(response.status).toBe(200);
  const refByIds = Object.fromEntries(Object.entries(idsOf(p).messages).map(([ref, id]) => [id, ref]));
  return (await body<Messages>(response)).data.map((m) => refByIds[m.id]!);
}

describe("messages targeting", () => {
  const cases: [string, string[]][] = [
    ["", ["current", "all"]],
    ["?platform=web", ["current", "all"]],
    ["?platform=ios", ["current", "all", "ios", "mobile"]],
    ["?platform=macos", ["current", "all", "mobile"]],
    ["?app_version=2.0.0", ["current", "all", "range", "min"]],
    ["?app_version=3.0.0", ["current", "all", "range", "min"]],
    ["?app_version=3.0.1", ["current", "all", "min"]],
    ["?app_version=1.4.9", ["current", "all"]],
    ["?app_version=1.0.0", ["current", "all", "max"]],
    ["?app_version=1.0", ["current", "all", "max"]],
    ["?app_version=v2.5", ["current", "all", "range", "min"]],
    ["?platform=ios&app_version=2.5.0", ["current", "all", "ios", "mobile", "range", "min", "ios-range"]],
    ["?platform=web&app_version=2.5.0", ["current", "all", "range", "min"]],
    ["?platform=macos&app_version=0.9.0", ["current", "all", "mobile", "max"]],
  ];
  for (const [query, expected] of cases) {
    it(`sends ${expected.join(", ")} for "${query || "no query"}"`, async () => {
      expect(await refsFor(query)).toEqual(expected);
    });
  }

  it("orders by priority desc, then created_at desc, then id desc", async () => {
    // "current" and "all" share priority 50; "current" was created later.
    expect((await refsFor("?platform=ios&app_version=2.5.0")).slice(0, 2)).toEqual(["current", "all"]);
  });

  it("applies the time window at the request's clock: starts_at inclusive, ends_at exclusive", async () => {
    const q = await ctx.importProject({
      messages: [
        message("starts", 2, { starts_at: "2030-01-01T00:00:00.000Z" }),
        message("ends", 1, { ends_at: "2030-01-01T00:00:00.000Z" }),
      ],
    });
    const realNow = ctx.deps.now;
    try {
      const list = async () =>
        (await body<Messages>(await ctx.get(`/api/v3/projects/${q.slug}/messages`, q.secretKey))).data.map((m) => m.title);
      ctx.deps.now = () => new Date("2029-12-31T23:59:59.999Z");
      expect(await list()).toEqual(["Title ends"]);
      ctx.deps.now = () => new Date("2030-01-01T00:00:00.000Z");
      expect(await list()).toEqual(["Title starts"]);
    } finally {
      ctx.deps.now = realNow;
    }
  });
});

describe("MessageObject", () => {
  it("sends every field", async () => {
    const q = await ctx.importProject({
      messages: [
        message("full", 7, {
          kind: "critical",
          presentation: "alert",
          action_label: "Update",
          action_url: "https://example.com/update",
          is_dismissible: false,
          starts_at: "2026-01-01T00:00:00Z",
          ends_at: "2099-01-01T00:00:00Z",
          created_at: "2026-02-03T04:05:06Z",
        }),
        message("plain", 1, { created_at: "2026-02-03T04:05:06Z" }),
      ],
    });
    const doc = await body<Messages>(await ctx.get(`/api/v3/projects/${q.slug}/messages`, q.secretKey));
    expect(doc.meta).toEqual({ page: 1, per_page: 20, total: 2, total_pages: 1, has_more: false });
    expect(doc.error).toBeNull();
    expect(doc.data).toEqual([
      {
        id: idsOf(q).messages.full,
        title: "Title full",
        body: "Body full",
        kind: "critical",
        presentation: "alert",
        priority: 7,
        action_label: "Update",
        action_url: "https://example.com/update",
        is_dismissible: false,
        starts_at: "2026-01-01T00:00:00.000Z",
        ends_at: "2099-01-01T00:00:00.000Z",
        created_at: "2026-02-03T04:05:06.000Z",
        updated_at: "2026-02-03T04:05:06.000Z",
      },
      {
        id: idsOf(q).messages.plain,
        title: "Title plain",
        body: "Body plain",
        kind: "info",
        presentation: "banner",
        priority: 1,
        action_label: null,
        action_url: null,
        is_dismissible: true,
        starts_at: null,
        ends_at: null,
        created_at: "2026-02-03T04:05:06.000Z",
        updated_at: "2026-02-03T04:05:06.000Z",
      },
    ]);
  });
});

describe("messages paging and errors", () => {
  it("pages after targeting, with meta counting only matching messages", async () => {
    const first = await body<Messages>(
      await ctx.get(`/api/v3/projects/${p.slug}/messages?platform=ios&app_version=2.5.0&per_page=3`, p.secretKey),
    );
    expect(first.meta).toEqual({ page: 1, per_page: 3, total: 7, total_pages: 3, has_more: true });
    expect(first.data).toHaveLength(3);
    const last = await body<Messages>(
      await ctx.get(`/api/v3/projects/${p.slug}/messages?platform=ios&app_version=2.5.0&per_page=3&page=3`, p.secretKey),
    );
    expect(last.meta).toEqual({ page: 3, per_page: 3, total: 7, total_pages: 3, has_more: false });
    expect(last.data.map((m) => m.title)).toEqual(["Title ios-range"]);
  });

  it("answers 422 naming the parameter", async () => {
    for (const [query, field] of [
      ["platform=android", "platform"],
      ["platform=", "platform"],
      ["app_version=abc", "app_version"],
      ["app_version=", "app_version"],
      ["per_page=101", "per_page"],
      ["page=0", "page"],
    ]) {
      const response = await ctx.get(`/api/v3/projects/${p.slug}/messages?${query}`, p.secretKey);
      expect(response.status, query).toBe(422);
      expect((await body<ErrorAnswer>(response)).error).toMatchObject({ code: "validation_failed", field });
    }
  });

  it("answers 403 not_allowed below the PRO plan and serves the embed key", async () => {
    const free = await ctx.importProject({ project: { plan: "free" }, messages: [message("m", 0)] });
    const response = await ctx.get(`/api/v3/projects/${free.slug}/messages`, free.embedKey);
    expect(response.status).toBe(403);
    expect((await body<ErrorAnswer>(response)).error.code).toBe("not_allowed");
    const ok = await ctx.get(`/api/v3/projects/${p.slug}/messages`, p.embedKey);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("Cache-Control")).toBe("private, max-age=60");
  });
});
