/**
 * POST /projects/{slug}/features (contract, "Taking part"): a suggestion lands on the roadmap's
 * first open column awaiting review, is hidden from listings and visible by id to its author;
 * 422 naming the field, 403 voter_banned / not_allowed, 401 without identity.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildSnapshot,
  createTestContext,
  type ImportedProject,
  type Schemas,
  type SnapshotParts,
  type TestContext,
  uniqueSlug,
} from "./support/harness.ts";

let ctx: TestContext;
let project: ImportedProject;

/** Voters ada, bob and banned ben with X-VF-Anon tokens unique to this project. */
function withVoters(overrides: SnapshotParts = {}): SnapshotParts {
  const slug = uniqueSlug("sugg");
  return {
    voters: [
      { ref: "ada", anon_token: `anon-ada-${slug}` },
      { ref: "bob", anon_token: `anon-bob-${slug}` },
      { ref: "ben", anon_token: `anon-ben-${slug}`, banned: true },
    ],
    ...overrides,
    project: { slug, ...overrides.project },
  };
}

const as = (voter: string, target: ImportedProject) => ({ "X-VF-Anon": `anon-${voter}-${target.slug}` });

function suggest(target: ImportedProject, body: unknown, voter: string | null = "ada") {
  return ctx.send("POST", `/api/v3/projects/${target.slug}/features`, target.secretKey, body, voter ? as(voter, target) : {});
}

beforeAll(async () => {
  ctx = await createTestContext();
  // Two open columns: the one with the lowest position takes suggestions, whatever the file order.
  const roadmap = buildSnapshot().boards[0];
  roadmap.columns.push({ ref: "c-ideas", name: "Ideas", color: "#111111", position: -1, is_votable: true, status: "open" });
  project = await ctx.importProject(
    withVoters({
      boards: [roadmap],
      features: [{ ref: "old", board: "roadmap", column: "c-planned", heading: "Existing", position: 7 }],
    }),
  );
});
afterAll(() => ctx.close());

describe("POST /features", () => {
  it("creates the suggestion awaiting review and answers 201 with the FeatureObject", async () => {
    const before = Date.now();
    const response = await suggest(project, { heading: "  Offline mode  ", description: "Work on the train" });
    expect(response.status).toBe(201);
    const body = await response.json();
    expect(body.meta).toBeNull();
    expect(body.error).toBeNull();
    expect(body.data).toEqual({
      id: expect.any(Number),
      heading: "Offline mode",
      description: "Work on the train",
      status: "open",
      board: { id: 0, kind: "roadmap", name: "Roadmap", slug: "roadmap" },
      column: { id: project.ids.ids.columns["c-ideas"], name: "Ideas", color: "#111111" },
      changelog_type: null,
      comment_count: 0,
      vote_count: 0,
      score: 0,
      score_is_weighted: false,
      view_count: 0,
      progress: null,
      has_voted: false,
      is_approved: false,
      is_pinned: false,
      developer_response: null,
      response_is_denial: false,
      linked_feature: null,
      release: null,
      tags: [],
      start_date: null,
      target_date: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const created = Date.parse(body.data.created_at);
    expect(created).toBeGreaterThanOrEqual(before - 1000);
    expect(created).toBeLessThanOrEqual(Date.now() + 1000);
    expect(body.data.updated_at).toBe(body.data.created_at);

    const stored = await ctx.db
      .selectFrom("features")
      .select(["position", "author_voter_id"])
      .where("id", "=", body.data.id)
      .executeTakeFirstOrThrow();
    expect(stored.position).toBe(8);
    expect(stored.author_voter_id).not.toBeNull();
  });

  it("ignores body keys the contract does not list", async () => {
    const response = await suggest(project, {
      heading: "Sneaky",
      description: "",
      vote_count: 500,
      is_approved: true,
      status: "done",
      is_pinned: true,
      voter_id: "x",
    });
    expect(response.status).toBe(201);
    const { data } = await response.json();
    expect(data).toMatchObject({
      heading: "Sneaky",
      description: "",
      vote_count: 0,
      score: 0,
      is_approved: false,
      status: "open",
      is_pinned: false,
    });
  });

  it("keeps the suggestion out of listings and shows it by id to its author only", async () => {
    const { data } = await (await suggest(project, { heading: "Private until reviewed", description: "x" })).json();
    const path = `/api/v3/projects/${project.slug}/features`;
    for (const query of ["", "?scope=project", "?status=open", "?q=reviewed"]) {
      const listed = await (await ctx.get(`${path}${query}`, project.secretKey, as("ada", project))).json();
      expect((listed.data as Schemas["FeatureObject"][]).map((feature) => feature.id)).not.toContain(data.id);
    }
    const own = await ctx.get(`${path}/${data.id}`, project.secretKey, as("ada", project));
    expect(own.status).toBe(200);
    expect((await own.json()).data).toMatchObject({ id: data.id, is_approved: false });
    expect((await ctx.get(`${path}/${data.id}`, project.secretKey, as("bob", project))).status).toBe(404);
    expect((await ctx.get(`${path}/${data.id}`, project.secretKey)).status).toBe(404);
  });

  it("accepts a heading of exactly 254 characters and a description of 2000", async () => {
    const response = await suggest(project, { heading: "h".repeat(254), description: "d".repeat(2000) });
    expect(response.status).toBe(201);
  });

  it.each([
    [{ description: "no heading" }, "heading"],
    [{ heading: "", description: "x" }, "heading"],
    [{ heading: "   ", description: "x" }, "heading"],
    [{ heading: "h".repeat(255), description: "x" }, "heading"],
    [{ heading: 42, description: "x" }, "heading"],
    [{ heading: "No description" }, "description"],
    [{ heading: "Long", description: "d".repeat(2001) }, "description"],
    [{ heading: "Null", description: null }, "description"],
  ])("answers 422 naming the field for %j", async (payload, field) => {
    const response = await suggest(project, payload);
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({
      data: null,
      meta: null,
      error: { code: "validation_failed", field, message: expect.any(String) },
    });
  });

  it("answers 422 for a body that is not JSON", async () => {
    const response = await suggest(project, "{not json");
    expect(response.status).toBe(422);
    expect((await response.json()).error.code).toBe("validation_failed");
  });

  it("answers 401 identity_required without a voter identity", async () => {
    const response = await suggest(project, { heading: "Anonymous", description: "x" }, null);
    expect(response.status).toBe(401);
    expect((await response.json()).error.code).toBe("identity_required");
  });

  it("answers 403 voter_banned for a banned voter", async () => {
    const response = await suggest(project, { heading: "Banned", description: "x" }, "ben");
    expect(response.status).toBe(403);
    expect((await response.json()).error.code).toBe("voter_banned");
  });

  it("answers 403 not_allowed when the project takes no suggestions", async () => {
    const closed = await ctx.importProject(withVoters({ project: { settings: { allow_suggestions: false } } }));
    const response = await suggest(closed, { heading: "Closed", description: "x" });
    expect(response.status).toBe(403);
    expect((await response.json()).error.code).toBe("not_allowed");
  });

  it("answers 403 not_allowed when the roadmap has no open column", async () => {
    const roadmap = buildSnapshot().boards[0];
    roadmap.columns = roadmap.columns.filter((column: { status: string }) => column.status !== "open");
    const noInbox = await ctx.importProject(withVoters({ boards: [roadmap] }));
    const response = await suggest(noInbox, { heading: "Nowhere", description: "x" });
    expect(response.status).toBe(403);
    expect((await response.json()).error.code).toBe("not_allowed");
  });
});
