/** GET /board and GET /projects/{slug}: the BoardDocument, field by field, under settings. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, body, createTestContext, type Ids, type ImportedProject, type TestContext } from "./support/harness.ts";

type BoardDocument = Answer<"/api/v3/projects/{slug}", "get">;

let ctx: TestContext;
/** The id map import printed: `{ project, ids }`. */
const idsOf = (p: ImportedProject): Ids => p.ids.ids ?? p.ids;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

const allOn = {
  allow_comments: true,
  allow_suggestions: true,
  allow_voting: true,
  allow_likes: true,
  default_mode: "roadmap",
  score_is_weighted: false,
  show_archived: false,
  show_comments: true,
  show_denied: true,
  show_progress: true,
  show_views: true,
  show_votes: true,
};

async function boardOf(project: { slug: string; secretKey: string }) {
  const response = await ctx.get(`/api/v3/projects/${project.slug}`, project.secretKey);
  expect(response.status).toBe(200);
  return body<BoardDocument>(response);
}

describe("BoardDocument", () => {
  it("sends every field of boards, columns, tags, display, project and theme", async () => {
    const theme = {
      font: "Lato",
      radius: "4px",
      light: {
        accent: "#000001",
        background: "#000002",
        border: "#000003",
        card_background: "#000004",
        text: "#000005",
        text_secondary: "#000006",
      },
      dark: {
        accent: "#100001",
        background: "#100002",
        border: "#100003",
        card_background: "#100004",
        text: "#100005",
        text_secondary: "#100006",
      },
    };
    const p = await ctx.importProject({
      project: {
        name: "Lumen",
        description: "Tell us",
        logo_url: "https://cdn.example/l.png",
        banner_url: "https://cdn.example/b.png",
        currency_symbol: "€",
        show_branding: false,
        settings: { ...allOn, default_mode: "list", score_is_weighted: true },
        theme,
      },
      tags: [
        { ref: "t-z", name: "zeta" },
        { ref: "t-a", name: "Alpha" },
        { ref: "t-b", name: "beta" },
      ],
      voters: [{ ref: "v1" }, { ref: "v2" }],
      features: [{ ref: "f1", board: "roadmap", column: "c-open", heading: "One" }],
      votes: [
        { voter: "v1", feature: "f1" },
        { voter: "v2", feature: "f1" },
      ],
    });
    const doc = await boardOf(p);
    expect(Object.keys(doc).sort()).toEqual(["data", "error", "meta"]);
    expect(doc.meta).toBeNull();
    expect(doc.error).toBeNull();
    const data = doc.data;
    expect(Object.keys(data).sort()).toEqual(["boards", "capabilities", "display", "project", "tags", "theme"]);
    expect(data.boards).toHaveLength(1);
    const roadmap = data.boards[0];
    expect(roadmap).toEqual({
      id: 0,
      kind: "roadmap",
      name: "Roadmap",
      slug: "roadmap",
      columns: [
        { id: idsOf(p).columns["c-open"], name: "Suggestions", color: "#9ca3af", position: 0, is_votable: true, status: "open" },
        { id: idsOf(p).columns["c-planned"], name: "Planned", color: "#3b82f6", position: 1, is_votable: true, status: "planned" },
        { id: idsOf(p).columns["c-progress"], name: "In progress", color: "#f59e0b", position: 2, is_votable: true, status: "in_progress" },
        { id: idsOf(p).columns["c-done"], name: "Done", color: "#10b981", position: 3, is_votable: false, status: "done" },
        { id: idsOf(p).columns["c-denied"], name: "Declined", color: null, position: 4, is_votable: false, status: "denied" },
      ],
    });
    expect(data.tags).toEqual([
      { id: idsOf(p).tags["t-a"], name: "Alpha" },
      { id: idsOf(p).tags["t-b"], name: "beta" },
      { id: idsOf(p).tags["t-z"], name: "zeta" },
    ]);
    expect(data.capabilities).toEqual({ can_comment: true, can_like: true, can_suggest: true, can_vote: true });
    const { allow_likes: _likes, ...display } = { ...allOn, default_mode: "list", score_is_weighted: true };
    expect(data.display).toEqual(display);
    expect(data.project).toEqual({
      banner_url: "https://cdn.example/b.png",
      currency_symbol: "€",
      description: "Tell us",
      logo_url: "https://cdn.example/l.png",
      name: "Lumen",
      show_branding: false,
      slug: p.slug,
      voter_count: 2,
    });
    expect(data.theme).toEqual({ dark: theme.dark, light: theme.light, font: "Lato", radius: "4px" });
  });

  it("sends the roadmap first, then custom boards by position, columns sorted, custom status null", async () => {
    const p = await ctx.importProject({
      boards: [
        { ref: "zz", kind: "custom", name: "Zed", slug: "zed", columns: [{ ref: "z1", name: "Z", position: 0, is_votable: false }] },
        {
          ref: "roadmap",
          kind: "roadmap",
          name: "Plan",
          slug: "roadmap",
          columns: [
            { ref: "c-late", name: "Later", color: null, position: 5, is_votable: true, status: "planned" },
            { ref: "c-open", name: "Ideas", color: "#111111", position: 1, is_votable: true, status: "open" },
          ],
        },
        {
          ref: "mobile",
          kind: "custom",
          name: "Mobile",
          slug: "mobile",
          columns: [
            { ref: "m2", name: "Second", color: "#222222", position: 2, is_votable: true },
            { ref: "m1", name: "First", color: null, position: 1, is_votable: false },
          ],
        },
      ],
    });
    const { data } = await boardOf(p);
    expect(data.boards.map((b) => [b.id, b.kind, b.slug])).toEqual([
      [0, "roadmap", "roadmap"],
      [idsOf(p).boards.zz, "custom", "zed"],
      [idsOf(p).boards.mobile, "custom", "mobile"],
    ]);
    expect(data.boards[0]!.columns.map((c) => c.name)).toEqual(["Ideas", "Later"]);
    expect(data.boards[2]!.columns).toEqual([
      { id: idsOf(p).columns.m1, name: "First", color: null, position: 1, is_votable: false, status: null },
      { id: idsOf(p).columns.m2, name: "Second", color: "#222222", position: 2, is_votable: true, status: null },
    ]);
    expect(data.boards[1]!.columns[0]!.status).toBeNull();
  });

  it("removes the denied column when show_denied is false and appends archived column -1 when show_archived", async () => {
    const p = await ctx.importProject({
      project: { settings: { ...allOn, show_denied: false, show_archived: true } },
      boards: [
        {
          ref: "roadmap",
          kind: "roadmap",
          name: "Roadmap",
          slug: "roadmap",
          columns: [
            { ref: "c-open", name: "Suggestions", color: null, position: 0, is_votable: true, status: "open" },
            { ref: "c-denied", name: "Declined", color: null, position: 7, is_votable: true, status: "denied" },
            { ref: "c-done", name: "Done", color: null, position: 3, is_votable: false, status: "done" },
          ],
        },
        { ref: "ios", kind: "custom", name: "iOS", slug: "ios", columns: [{ ref: "i1", name: "Soon", position: 4, is_votable: true }] },
        { ref: "empty", kind: "custom", name: "Empty", slug: "empty", columns: [] },
      ],
    });
    const { data } = await boardOf(p);
    const [roadmap, ios, empty] = data.boards;
    expect(roadmap!.columns.map((c) => c.status)).toEqual(["open", "done", "archived"]);
    expect(roadmap!.columns[2]).toEqual({ id: -1, name: "Archived", color: null, position: 4, is_votable: false, status: "archived" });
    expect(ios!.columns.at(-1)).toEqual({ id: -1, name: "Archived", color: null, position: 5, is_votable: false, status: null });
    expect(empty!.columns).toEqual([{ id: -1, name: "Archived", color: null, position: 0, is_votable: false, status: null }]);
    expect(data.display.show_denied).toBe(false);
    expect(data.display.show_archived).toBe(true);
  });

  it("keeps no archived column when show_archived is false", async () => {
    const p = await ctx.importProject({});
    const { data } = await boardOf(p);
    expect(data.boards[0]!.columns.some((c) => c.id === -1)).toBe(false);
    expect(data.boards[0]!.columns.some((c) => c.status === "denied")).toBe(true);
  });

  it("turns every column unvotable and can_vote off when allow_voting is false", async () => {
    const p = await ctx.importProject({ project: { settings: { ...allOn, allow_voting: false } } });
    const { data } = await boardOf(p);
    expect(data.boards[0]!.columns.every((c) => c.is_votable === false)).toBe(true);
    expect(data.capabilities.can_vote).toBe(false);
    expect(data.display.allow_voting).toBe(false);
  });

  it("sets can_vote false when no column takes votes, even with allow_voting", async () => {
    const p = await ctx.importProject({
      boards: [
        {
          ref: "roadmap",
          kind: "roadmap",
          name: "R",
          slug: "roadmap",
          columns: [{ ref: "c-open", name: "S", position: 0, is_votable: false, status: "open" }],
        },
      ],
    });
    const { data } = await boardOf(p);
    expect(data.capabilities).toEqual({ can_comment: true, can_like: true, can_suggest: true, can_vote: false });
  });

  it("derives can_comment and can_like from allow_* and show_comments", async () => {
    const cases: [Record<string, boolean>, Record<string, boolean>][] = [
      [{ allow_comments: false }, { can_comment: false, can_like: true }],
      [{ allow_likes: false }, { can_comment: true, can_like: false }],
      [{ show_comments: false }, { can_comment: false, can_like: false }],
    ];
    for (const [settings, expected] of cases) {
      const p = await ctx.importProject({ project: { settings: { ...allOn, ...settings } } });
      const { data } = await boardOf(p);
      expect(data.capabilities).toMatchObject(expected);
      expect(data.display.show_comments).toBe(settings.show_comments ?? true);
      expect(data.display).not.toHaveProperty("allow_likes");
    }
  });

  it("sets can_suggest only with allow_suggestions and an open roadmap column", async () => {
    const off = await ctx.importProject({ project: { settings: { ...allOn, allow_suggestions: false } } });
    expect((await boardOf(off)).data.capabilities.can_suggest).toBe(false);
    const noOpen = await ctx.importProject({
      boards: [
        {
          ref: "roadmap",
          kind: "roadmap",
          name: "R",
          slug: "roadmap",
          columns: [{ ref: "c-planned", name: "P", position: 0, is_votable: true, status: "planned" }],
        },
      ],
    });
    const doc = (await boardOf(noOpen)).data;
    expect(doc.capabilities.can_suggest).toBe(false);
    expect(doc.capabilities.can_vote).toBe(true);
  });

  it("reads voter_count fresh after a vote", async () => {
    const p = await ctx.importProject({
      voters: [{ ref: "v1", anon_token: "anon-token-board-voter-count-1234" }],
      features: [{ ref: "f1", board: "roadmap", column: "c-open", heading: "One" }],
    });
    expect((await boardOf(p)).data.project.voter_count).toBe(0);
    const vote = await ctx.send("POST", `/api/v3/projects/${p.slug}/features/${p.ids.ids.features.f1}/vote`, p.secretKey, undefined, {
      "X-VF-Anon": "anon-token-board-voter-count-1234",
    });
    expect(vote.status).toBe(200);
    expect((await boardOf(p)).data.project.voter_count).toBe(1);
  });

  it("answers GET /board with the key's project, identical to /projects/{slug}, for both key kinds", async () => {
    const p = await ctx.importProject({ tags: [{ ref: "t", name: "T" }] });
    const bySlug = await boardOf(p);
    for (const key of [p.secretKey, p.embedKey]) {
      const response = await ctx.get("/api/v3/board", key);
      expect(response.status).toBe(200);
      expect(await body<BoardDocument>(response)).toEqual(bySlug);
    }
    const embedBySlug = await ctx.get(`/api/v3/projects/${p.slug}`, p.embedKey);
    expect(await body<BoardDocument>(embedBySlug)).toEqual(bySlug);
  });
});
