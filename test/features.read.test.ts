/**
 * GET /projects/{slug}/features and /features/{id} (contract, "Reading a board", FeatureObject):
 * every sort, pinned first, each filter and its 422, visibility (approval gate, show_denied,
 * show_archived, column -1), show_* nulls, weighted score, has_voted, meta arithmetic.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Answer,
  buildSnapshot,
  createTestContext,
  type ErrorAnswer,
  type ImportedProject,
  body as parse,
  type Schemas,
  type SnapshotParts,
  type TestContext,
  uniqueSlug,
} from "./support/harness.ts";

type FeatureList = Answer<"/api/v3/projects/{slug}/features", "get">;
type FeatureAnswer = Answer<"/api/v3/projects/{slug}/features/{id}", "get">;

/** The X-VF-Anon token of a voter of a project built by richSnapshot (tokens are unique per database). */
const tokenOf = (voter: string, project: ImportedProject) => ({ "X-VF-Anon": `anon-${voter}-${project.slug}` });

/**
 * Roadmap features a..e (public), f (archived), g (suggestion awaiting review by dan), m1 on a
 * custom board. Counts: a 2 votes (weighted 4: ada has multiplier 3), b 3, c 1 (weighted 3),
 * d 0 (pinned), e 1 (denied). Comments: a 1, c 3. Vote times make trending e, c, b, a.
 */
function richSnapshot(settings: Record<string, unknown> = {}): SnapshotParts {
  const roadmap = buildSnapshot().boards[0];
  const slug = uniqueSlug("feat");
  const vote = (voter: string, feature: string, created_at: string) => ({ voter, feature, created_at });
  return {
    project: { slug, settings },
    tags: [
      { ref: "t-ui", name: "UI" },
      { ref: "t-api", name: "api" },
      { ref: "t-perf", name: "Performance" },
    ],
    tiers: [{ ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 3 }],
    boards: [
      roadmap,
      {
        ref: "mobile",
        kind: "custom",
        name: "Mobile",
        slug: "mobile",
        columns: [{ ref: "m-later", name: "Later", color: null, position: 0, is_votable: true }],
      },
    ],
    voters: [
      { ref: "ada", anon_token: `anon-ada-${slug}`, tier: "pro" },
      { ref: "bob", anon_token: `anon-bob-${slug}` },
      { ref: "cy", anon_token: `anon-cy-${slug}` },
      { ref: "dan", anon_token: `anon-dan-${slug}` },
    ],
    features: [
      {
        ref: "a",
        board: "roadmap",
        column: "c-open",
        heading: "Alpha dark mode",
        tags: ["t-ui"],
        position: 0,
        created_at: "2026-03-15T10:00:00Z",
        updated_at: "2026-03-16T10:00:00Z",
      },
      {
        ref: "b",
        board: "roadmap",
        column: "c-planned",
        heading: "Beta export",
        tags: ["t-api"],
        position: 4,
        created_at: "2026-02-01T10:00:00Z",
      },
      {
        ref: "c",
        board: "roadmap",
        column: "c-progress",
        heading: "Gamma 100% speed_up",
        description: "Make it FAST",
        tags: ["t-ui", "t-perf"],
        position: 1,
        progress: 40,
        view_count: 12,
        created_at: "2026-03-01T10:00:00Z",
        updated_at: "2026-04-02T08:30:00Z",
        start_date: "2026-03-05T00:00:00Z",
        target_date: "2026-12-01T00:00:00Z",
        developer_response: "Working on it",
        response_is_denial: false,
      },
      {
        ref: "d",
        board: "roadmap",
        column: "c-done",
        heading: "Delta pinned",
        is_pinned: true,
        position: 3,
        created_at: "2025-12-01T10:00:00Z",
      },
      {
        ref: "e",
        board: "roadmap",
        column: "c-denied",
        heading: "Epsilon denied",
        position: 2,
        linked_feature: "b",
        developer_response: "No",
        response_is_denial: true,
        created_at: "2026-04-01T10:00:00Z",
      },
      { ref: "f", board: "roadmap", column: null, status: "archived", heading: "Zeta archived", created_at: "2026-05-01T10:00:00Z" },
      {
        ref: "g",
        board: "roadmap",
        column: "c-open",
        heading: "Eta pending",
        is_approved: false,
        author: "dan",
        created_at: "2026-06-01T10:00:00Z",
      },
      { ref: "m1", board: "mobile", column: "m-later", heading: "Mobile widget", linked_feature: "g", created_at: "2026-01-01T10:00:00Z" },
    ],
    votes: [
      vote("ada", "a", "2026-01-02T00:00:00Z"),
      vote("bob", "a", "2026-01-03T00:00:00Z"),
      vote("bob", "b", "2026-06-01T00:00:00Z"),
      vote("cy", "b", "2026-06-01T00:00:00Z"),
      vote("dan", "b", "2026-06-01T00:00:00Z"),
      vote("ada", "c", "2026-11-20T00:00:00Z"),
      vote("cy", "e", "2026-11-21T00:00:00Z"),
    ],
    comments: [
      { ref: "k1", feature: "a", voter: "bob", content: "Yes" },
      { ref: "k2", feature: "c", voter: "bob", content: "Please" },
      { ref: "k3", feature: "c", voter: "cy", content: "Agreed" },
      { ref: "k4", feature: "c", voter: "ada", parent: "k2", content: "Soon" },
    ],
    releases: [
      { ref: "r0", name: "0.9", published_at: "2026-09-01T00:00:00Z", features: [{ feature: "b", changelog_type: "new" }] },
      { ref: "r1", name: "1.0", published_at: "2026-10-01T00:00:00Z", features: [{ feature: "b", changelog_type: "improvement" }] },
      { ref: "r2", name: "draft", published_at: null, features: [{ feature: "c", changelog_type: "fix" }] },
      { ref: "r3", name: "future", published_at: "2099-01-01T00:00:00Z", features: [{ feature: "a", changelog_type: "fix" }] },
    ],
  };
}

let ctx: TestContext;
let plain: ImportedProject;
let weighted: ImportedProject;
let hidden: ImportedProject;

beforeAll(async () => {
  ctx = await createTestContext();
  plain = await ctx.importProject(richSnapshot());
  weighted = await ctx.importProject(richSnapshot({ score_is_weighted: true }));
  hidden = await ctx.importProject(
    richSnapshot({
      show_votes: false,
      show_comments: false,
      show_views: false,
      show_progress: false,
      show_denied: false,
      show_archived: true,
    }),
  );
});
afterAll(() => ctx.close());

/** One listing of `project`; `T` names the answer expected (an error envelope for refusals). */
async function list<T = FeatureList>(project: ImportedProject, query = "", headers: Record<string, string> = {}) {
  const response = await ctx.get(`/api/v3/projects/${project.slug}/features${query}`, project.secretKey, headers);
  return { status: response.status, body: await parse<T>(response) };
}

/** Feature refs of a listing, in order. */
async function refsOf(project: ImportedProject, query = "", headers: Record<string, string> = {}) {
  const { status, body } = await list(project, query, headers);
  expect(status, JSON.stringify(body)).toBe(200);
  const byId = new Map(Object.entries(project.ids.ids.features as Record<string, number>).map(([ref, id]) => [id, ref]));
  return body.data.map((feature) => byId.get(feature.id));
}

async function expect422(project: ImportedProject, query: string, field: string) {
  const { status, body } = await list<ErrorAnswer>(project, query);
  expect(status, query).toBe(422);
  expect(body).toEqual({ data: null, meta: null, error: { code: "validation_failed", field, message: expect.any(String) } });
}

const fid = (project: ImportedProject, ref: string): number => project.ids.ids.features[ref];
const cid = (project: ImportedProject, ref: string): number => project.ids.ids.columns[ref];
const tid = (project: ImportedProject, ref: string): number => project.ids.ids.tags[ref];

describe("sort orders (pinned first, ties by id)", () => {
  it.each([
    ["", ["d", "b", "a", "e", "c"]],
    ["?sort=top", ["d", "b", "a", "e", "c"]],
    ["?sort=votes", ["d", "b", "a", "e", "c"]],
    ["?sort=trending", ["d", "e", "c", "b", "a"]],
    ["?sort=new", ["d", "e", "a", "c", "b"]],
    ["?sort=oldest", ["d", "b", "c", "a", "e"]],
    ["?sort=comments", ["d", "c", "a", "e", "b"]],
    ["?sort=board", ["d", "a", "c", "e", "b"]],
  ])("plain project %s", async (query, expected) => {
    expect(await refsOf(plain, query)).toEqual(expected);
  });

  it("top follows the weighted score when the project weights votes; votes stays the headcount", async () => {
    expect(await refsOf(weighted, "?sort=top")).toEqual(["d", "a", "c", "b", "e"]);
    expect(await refsOf(weighted, "?sort=votes")).toEqual(["d", "b", "a", "e", "c"]);
  });

  it("refuses an unknown sort", async () => {
    await expect422(plain, "?sort=hot", "sort");
  });
});

describe("FeatureObject", () => {
  it("sends every field of the contract", async () => {
    const { body } = await list(plain, "?sort=board", tokenOf("ada", plain));
    const c = body.data.find((feature) => feature.id === fid(plain, "c"));
    expect(c).toEqual({
      id: fid(plain, "c"),
      heading: "Gamma 100% speed_up",
      description: "Make it FAST",
      status: "in_progress",
      board: { id: 0, kind: "roadmap", name: "Roadmap", slug: "roadmap" },
      column: { id: cid(plain, "c-progress"), name: "In progress", color: "#f59e0b" },
      changelog_type: null,
      comment_count: 3,
      vote_count: 1,
      score: 1,
      score_is_weighted: false,
      view_count: 12,
      progress: 40,
      has_voted: true,
      is_approved: true,
      is_pinned: false,
      developer_response: "Working on it",
      response_is_denial: false,
      linked_feature: null,
      release: null,
      tags: [
        { id: tid(plain, "t-perf"), name: "Performance" },
        { id: tid(plain, "t-ui"), name: "UI" },
      ],
      start_date: "2026-03-05T00:00:00.000Z",
      target_date: "2026-12-01T00:00:00.000Z",
      created_at: "2026-03-01T10:00:00.000Z",
      updated_at: "2026-04-02T08:30:00.000Z",
    });
  });

  it("names the latest published release and its changelog type; drafts and future releases do not count", async () => {
    const byRef = await featuresByRef(plain, "?sort=board");
    expect(byRef.b!.release).toEqual({ id: plain.ids.ids.releases.r1, name: "1.0" });
    expect(byRef.b!.changelog_type).toBe("improvement");
    expect(byRef.c!.release).toBeNull();
    expect(byRef.a!.release).toBeNull();
    expect(byRef.a!.changelog_type).toBeNull();
  });

  it("links a duplicate only while its target is public", async () => {
    const byRef = await featuresByRef(plain, "?scope=project");
    expect(byRef.e!.linked_feature).toEqual({ id: fid(plain, "b"), heading: "Beta export" });
    expect(byRef.e!.response_is_denial).toBe(true);
    expect(byRef.m1!.linked_feature).toBeNull();
    expect(byRef.m1!.board).toEqual({ id: plain.ids.ids.boards.mobile, kind: "custom", name: "Mobile", slug: "mobile" });
    expect(byRef.m1!.column).toEqual({ id: cid(plain, "m-later"), name: "Later", color: null });
  });

  it("reports the weighted total as score where votes are weighted", async () => {
    const byRef = await featuresByRef(weighted);
    expect(byRef.a).toMatchObject({ vote_count: 2, score: 4, score_is_weighted: true });
    expect(byRef.c).toMatchObject({ vote_count: 1, score: 3, score_is_weighted: true });
  });

  it("sends null for hidden counters", async () => {
    const byRef = await featuresByRef(hidden);
    for (const feature of Object.values(byRef)) {
      expect(feature).toMatchObject({ comment_count: null, vote_count: null, score: null, view_count: null, progress: null });
      expect(feature.score_is_weighted).toBe(false);
    }
  });

  it("has_voted reflects the request's voter and is false without identity", async () => {
    const mine = await featuresByRef(plain, "", tokenOf("ada", plain));
    expect(mine.a!.has_voted).toBe(true);
    expect(mine.c!.has_voted).toBe(true);
    expect(mine.b!.has_voted).toBe(false);
    const anonymous = await featuresByRef(plain);
    expect(Object.values(anonymous).every((feature) => feature.has_voted === false)).toBe(true);
  });
});

async function featuresByRef(project: ImportedProject, query = "", headers: Record<string, string> = {}) {
  const { status, body } = await list(project, query, headers);
  expect(status).toBe(200);
  const byId = new Map(Object.entries(project.ids.ids.features as Record<string, number>).map(([ref, id]) => [id, ref]));
  return Object.fromEntries(body.data.map((feature) => [byId.get(feature.id)!, feature])) as Record<string, Schemas["FeatureObject"]>;
}

describe("filters", () => {
  it("board picks a custom board; roadmap and omission mean the roadmap; unknown is 422", async () => {
    expect(await refsOf(plain, "?board=mobile")).toEqual(["m1"]);
    expect(await refsOf(plain, "?board=roadmap&sort=board")).toEqual(["d", "a", "c", "e", "b"]);
    await expect422(plain, "?board=nope", "board");
  });

  it("column narrows to one column of the board; other boards' columns and unknown ids are 422", async () => {
    expect(await refsOf(plain, `?column=${cid(plain, "c-planned")}`)).toEqual(["b"]);
    expect(await refsOf(plain, `?board=mobile&column=${cid(plain, "m-later")}`)).toEqual(["m1"]);
    await expect422(plain, `?column=${cid(plain, "m-later")}`, "column");
    await expect422(plain, "?column=999999", "column");
    await expect422(plain, "?column=abc", "column");
    await expect422(plain, "?column=-1", "column");
  });

  it("scope=project lists every public feature of every board and combines with neither board nor column", async () => {
    expect(await refsOf(plain, "?scope=project&sort=oldest")).toEqual(["d", "m1", "b", "c", "a", "e"]);
    await expect422(plain, "?scope=project&board=mobile", "scope");
    await expect422(plain, `?scope=project&column=${cid(plain, "c-open")}`, "scope");
    await expect422(plain, "?scope=board", "scope");
  });

  it("tag matches any of one or several tags", async () => {
    expect(await refsOf(plain, `?sort=board&tag=${tid(plain, "t-ui")}`)).toEqual(["a", "c"]);
    expect(await refsOf(plain, `?sort=board&tag=${tid(plain, "t-ui")}&tag=${tid(plain, "t-api")}`)).toEqual(["a", "c", "b"]);
    expect(await refsOf(plain, "?tag=999999")).toEqual([]);
    await expect422(plain, `?tag=${tid(plain, "t-ui")}&tag=x`, "tag");
    await expect422(plain, "?tag=0", "tag");
  });

  it("status matches any of one or several statuses; a suggestion awaiting review stays hidden", async () => {
    expect(await refsOf(plain, "?status=planned")).toEqual(["b"]);
    expect(await refsOf(plain, "?sort=board&status=planned&status=in_progress")).toEqual(["c", "b"]);
    expect(await refsOf(plain, "?status=open")).toEqual(["a"]);
    await expect422(plain, "?status=bogus", "status");
  });

  it("q matches heading and description case-insensitively, with % and _ taken literally", async () => {
    expect(await refsOf(plain, "?q=DARK")).toEqual(["a"]);
    expect(await refsOf(plain, "?q=fast")).toEqual(["c"]);
    expect(await refsOf(plain, `?q=${encodeURIComponent("100%")}`)).toEqual(["c"]);
    expect(await refsOf(plain, `?q=${encodeURIComponent("%")}`)).toEqual(["c"]);
    expect(await refsOf(plain, "?q=_")).toEqual(["c"]);
    expect(await refsOf(plain, "?q=pending")).toEqual([]);
    await expect422(plain, `?q=${"x".repeat(201)}`, "q");
  });

  it("q follows a feature's new heading (the search text is kept by a trigger, apart from the counters)", async () => {
    const id = plain.ids.ids.features.a;
    const before = await ctx.db.selectFrom("features").select(["heading", "vote_count"]).where("id", "=", id).executeTakeFirstOrThrow();
    try {
      await ctx.db.updateTable("features").set({ heading: "Zebra stripes everywhere" }).where("id", "=", id).execute();
      expect(await refsOf(plain, "?q=zebra")).toEqual(["a"]);
      await ctx.db.updateTable("features").set({ vote_count: 3 }).where("id", "=", id).execute();
      expect(await refsOf(plain, "?q=stripes")).toEqual(["a"]);
    } finally {
      await ctx.db.updateTable("features").set(before).where("id", "=", id).execute();
    }
  });

  it("filters combine", async () => {
    expect(await refsOf(plain, `?tag=${tid(plain, "t-ui")}&status=in_progress&q=gamma`)).toEqual(["c"]);
  });
});

describe("visibility settings", () => {
  it("show_denied false removes denied features, their column and the denied status", async () => {
    expect(await refsOf(hidden, "?sort=board")).toEqual(["d", "a", "c", "b", "f"]);
    expect(await refsOf(hidden, "?status=denied")).toEqual([]);
    await expect422(hidden, `?column=${cid(hidden, "c-denied")}`, "column");
    expect(await refsOf(plain, `?column=${cid(plain, "c-denied")}`)).toEqual(["e"]);
  });

  it("show_archived true lists archived features and opens column -1", async () => {
    const { body } = await list(hidden, "?column=-1");
    expect(body.data.map((feature) => feature.id)).toEqual([fid(hidden, "f")]);
    expect(body.data[0]).toMatchObject({ status: "archived", column: { id: -1, name: "Archived", color: null } });
    expect(await refsOf(hidden, "?board=mobile&column=-1")).toEqual([]);
    expect(await refsOf(plain, "?status=archived")).toEqual([]);
  });
});

describe("pagination", () => {
  it("pages through the order with consistent meta", async () => {
    const first = await list(plain, "?sort=board&per_page=2");
    expect(first.body.meta).toEqual({ page: 1, per_page: 2, total: 5, total_pages: 3, has_more: true });
    const last = await list(plain, "?sort=board&per_page=2&page=3");
    expect(last.body.meta).toEqual({ page: 3, per_page: 2, total: 5, total_pages: 3, has_more: false });
    const pages = [...first.body.data, ...(await list(plain, "?sort=board&per_page=2&page=2")).body.data, ...last.body.data];
    expect(pages.map((feature) => feature.id)).toEqual(["d", "a", "c", "e", "b"].map((ref) => fid(plain, ref)));
  });

  it("answers an empty page beyond the end", async () => {
    const beyond = await list(plain, "?per_page=2&page=4");
    expect(beyond.status).toBe(200);
    expect(beyond.body).toEqual({ data: [], meta: { page: 4, per_page: 2, total: 5, total_pages: 3, has_more: false }, error: null });
  });

  it("returns exactly per_page features on a first page whatever the page size (first pages fetch a larger bucket)", async () => {
    const roadmap = buildSnapshot().boards[0];
    const many = await ctx.importProject({
      project: { slug: uniqueSlug("pages") },
      boards: [roadmap],
      features: Array.from({ length: 120 }, (_, i) => ({
        ref: `f${i}`,
        board: "roadmap",
        column: "c-open",
        heading: `Feature ${i}`,
        position: i,
      })),
    });
    const order = async (query: string) => (await list(many, query)).body.data.map((feature) => feature.id);
    const all = [...(await order("?sort=board&per_page=100")), ...(await order("?sort=board&per_page=100&page=2"))];
    expect(all).toHaveLength(120);
    for (const perPage of [1, 19, 20, 21, 49, 50, 51, 99, 100]) {
      expect(await order(`?sort=board&per_page=${perPage}`)).toEqual(all.slice(0, perPage));
      expect(await order(`?sort=board&per_page=${perPage}&page=2`)).toEqual(all.slice(perPage, 2 * perPage));
    }
    expect((await list(many, "?sort=board&per_page=21")).body.meta).toEqual({
      page: 1,
      per_page: 21,
      total: 120,
      total_pages: 6,
      has_more: true,
    });
  });

  it("concurrent first reads of one listing's pages and sorts all carry its total, before and after an owner adds a feature", async () => {
    // Each filter's total is counted once at a time per instance and shared (features.handlers.ts).
    const project = await ctx.importProject(richSnapshot());
    const queries = ["board", "top", "new", "trending"].flatMap((sort) => [1, 2, 3].map((page) => `?sort=${sort}&per_page=2&page=${page}`));
    const totals = async () => (await Promise.all(queries.map((query) => list(project, query)))).map(({ body }) => body.meta.total);
    expect(await totals()).toEqual(queries.map(() => 5));
    const added = await ctx.send("POST", `/api/v3/projects/${project.slug}/admin/features`, project.secretKey, {
      heading: "Added while the totals were cached",
      status: "planned",
    });
    expect(added.status).toBe(201);
    expect(await totals()).toEqual(queries.map(() => 6));
  });

  it("defaults to page 1 of 20", async () => {
    expect((await list(plain)).body.meta).toEqual({ page: 1, per_page: 20, total: 5, total_pages: 1, has_more: false });
  });

  it.each([
    ["?per_page=0", "per_page"],
    ["?per_page=101", "per_page"],
    ["?page=0", "page"],
    ["?page=x", "page"],
    // Integers are decimal digits: number coercion would read each of these as 16, 10, 2 or 1.
    ["?page=0x10", "page"],
    ["?page=1e1", "page"],
    ["?per_page=%202", "per_page"],
    ["?page=1.0", "page"],
    ["?column=0x1", "column"],
    ["?tag=1e3", "tag"],
  ])("%s is 422 naming the parameter", async (query, field) => {
    await expect422(plain, query, field);
  });
});

describe("GET /features/{id}", () => {
  const get = (project: ImportedProject, id: number | string, headers: Record<string, string> = {}) =>
    ctx.get(`/api/v3/projects/${project.slug}/features/${id}`, project.secretKey, headers);

  it("answers the same object the listing does", async () => {
    const listed = (await featuresByRef(plain, "", tokenOf("ada", plain))).b;
    const response = await get(plain, fid(plain, "b"), tokenOf("ada", plain));
    expect(response.status).toBe(200);
    expect(await parse<FeatureAnswer>(response)).toEqual({ data: listed, meta: null, error: null });
  });

  it("shows a suggestion awaiting review to its author only", async () => {
    const pending = fid(plain, "g");
    expect((await get(plain, pending)).status).toBe(404);
    const other = await get(plain, pending, tokenOf("bob", plain));
    expect(other.status).toBe(404);
    expect((await parse<ErrorAnswer>(other)).error.code).toBe("not_found");
    const own = await get(plain, pending, tokenOf("dan", plain));
    expect(own.status).toBe(200);
    expect((await parse<FeatureAnswer>(own)).data).toMatchObject({
      id: pending,
      is_approved: false,
      status: "open",
      heading: "Eta pending",
    });
  });

  it("answers 404 for hidden, unknown and other projects' features and 422 for a bad id", async () => {
    expect((await get(plain, fid(plain, "f"))).status).toBe(404);
    expect((await get(hidden, fid(hidden, "e"))).status).toBe(404);
    expect((await get(hidden, fid(hidden, "f"))).status).toBe(200);
    expect((await get(plain, 99999999)).status).toBe(404);
    expect((await get(plain, fid(weighted, "a"))).status).toBe(404);
    for (const id of ["abc", `0x${fid(plain, "a").toString(16)}`, `${fid(plain, "a")}.0`]) {
      const bad = await get(plain, id);
      expect(bad.status, id).toBe(422);
      expect((await parse<ErrorAnswer>(bad)).error).toMatchObject({ code: "validation_failed", field: "id" });
    }
    const hex = await parse<ErrorAnswer>(await get(plain, "0x10"));
    expect(hex.error.message).toContain("decimal digits");
  });
});

describe("read caching", () => {
  it("answers the listing with an ETag and 304 when it is sent back", async () => {
    const path = `/api/v3/projects/${plain.slug}/features?sort=new`;
    const first = await ctx.get(path, plain.secretKey);
    const etag = first.headers.get("ETag");
    expect(etag).toBeTruthy();
    expect(first.headers.get("Cache-Control")).toBe("private, max-age=60");
    const again = await ctx.get(path, plain.secretKey, { "If-None-Match": etag! });
    expect(again.status).toBe(304);
  });
});
