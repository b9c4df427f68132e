/**
 * Owner feature routes, by outcome (owner-api-v3.md: AdminFeatureObject, /features routes,
 * Rules 1-3): what the owner reads and writes, what the public board shows right after, and
 * every stored counter equal to its rows after each change.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { counterProblems, projectIdOf } from "./support/counters.invariants.ts";
import {
  type Answer,
  createTestContext,
  type ImportedProject,
  type OwnerErrorAnswer,
  body as parse,
  type SnapshotParts,
  type TestContext,
} from "./support/harness.ts";

type AdminFeature = Answer<"/api/v3/projects/{slug}/admin/features/{id}", "get">;
type AdminFeatureList = Answer<"/api/v3/projects/{slug}/admin/features", "get">;
type CreatedFeature = Answer<"/api/v3/projects/{slug}/admin/features", "post", 201>;
type PatchedFeature = Answer<"/api/v3/projects/{slug}/admin/features/{id}", "patch">;
type DeletedFeature = Answer<"/api/v3/projects/{slug}/admin/features/{id}", "delete">;
type Merged = Answer<"/api/v3/projects/{slug}/admin/features/{id}/merge", "post">;
type Unmerged = Answer<"/api/v3/projects/{slug}/admin/features/{id}/unmerge", "post">;
type PublicFeature = Answer<"/api/v3/projects/{slug}/features/{id}", "get">;
type PublicFeatureList = Answer<"/api/v3/projects/{slug}/features", "get">;
type BoardDocument = Answer<"/api/v3/projects/{slug}", "get">;
type Identity = Answer<"/api/v3/projects/{slug}/identity", "post">;

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

/** Tiers, a custom board, tags, five voters (one owner), features with votes and comments. */
function board(overrides: SnapshotParts = {}): SnapshotParts {
  return {
    project: { settings: { score_is_weighted: true, show_votes: false } },
    tiers: [{ ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 3 }],
    tags: [
      { ref: "t-ui", name: "UI" },
      { ref: "t-api", name: "API" },
    ],
    boards: [
      {
        ref: "roadmap",
        kind: "roadmap",
        name: "Roadmap",
        slug: "roadmap",
        columns: [
          { ref: "c-open", name: "Suggestions", position: 0, is_votable: true, status: "open" },
          { ref: "c-planned", name: "Planned", position: 1, is_votable: true, status: "planned" },
          { ref: "c-planned2", name: "Planned later", position: 2, is_votable: true, status: "planned" },
          { ref: "c-done", name: "Done", position: 3, is_votable: false, status: "done" },
        ],
      },
      {
        ref: "mobile",
        kind: "custom",
        name: "Mobile",
        slug: "mobile",
        columns: [
          { ref: "m-later", name: "Later", position: 1, is_votable: true },
          { ref: "m-now", name: "Now", position: 0, is_votable: true },
        ],
      },
    ],
    voters: [
      { ref: "boss", display_name: "Boss", role: "owner" },
      { ref: "ed", display_name: "Ed", role: "editor" },
      { ref: "a", tier: "pro" },
      { ref: "b" },
      { ref: "c" },
    ],
    features: [
      { ref: "dup", board: "roadmap", column: "c-open", heading: "Dark theme", author: "c", tags: ["t-ui"] },
      { ref: "main", board: "roadmap", column: "c-planned", heading: "Dark mode" },
      { ref: "other", board: "roadmap", column: "c-planned", heading: "Other" },
      { ref: "phone", board: "mobile", column: "m-later", heading: "Widget", status: "planned" },
    ],
    votes: [
      { voter: "a", feature: "dup", created_at: "2026-11-01T00:00:00Z" },
      { voter: "b", feature: "dup", created_at: "2026-11-02T00:00:00Z" },
      { voter: "a", feature: "main", created_at: "2026-11-05T00:00:00Z" },
      { voter: "c", feature: "main", created_at: "2026-11-03T00:00:00Z" },
      { voter: "c", feature: "other", created_at: "2026-11-04T00:00:00Z" },
    ],
    comments: [
      { ref: "k1", feature: "dup", voter: "b", content: "Me too" },
      { ref: "k2", feature: "dup", voter: "c", content: "+1", parent: "k1" },
    ],
    likes: [{ voter: "a", comment: "k1" }],
    ...overrides,
  };
}

const admin = (p: ImportedProject) => `/api/v3/projects/${p.slug}/admin`;
const pub = (p: ImportedProject) => `/api/v3/projects/${p.slug}`;
/** An owner request; `T` names the answer expected. */
async function call<T = unknown>(p: ImportedProject, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await ctx.send(method, `${admin(p)}${path}`, p.secretKey, body);
  return { status: response.status, body: await parse<T>(response) };
}
/** A read of `path`; `T` names the answer expected. */
async function read<T = unknown>(
  p: ImportedProject,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T }> {
  const response = await ctx.get(path, p.secretKey, headers);
  return { status: response.status, body: await parse<T>(response) };
}
async function exact(p: ImportedProject) {
  expect(await counterProblems(ctx.db, await projectIdOf(ctx.db, p.slug))).toEqual([]);
}
async function votesOf(featureId: number) {
  const rows = await ctx.db
    .selectFrom("votes")
    .innerJoin("voters", "voters.id", "votes.voter_id")
    .select(["voters.public_id", "votes.weight", "votes.created_at"])
    .where("feature_id", "=", featureId)
    .execute();
  return byVoter(rows.map((row) => ({ voter: row.public_id, weight: row.weight, at: new Date(row.created_at).toISOString() })));
}
function byVoter<T extends { voter: string }>(list: T[]): T[] {
  return list.sort((x, y) => (x.voter < y.voter ? -1 : x.voter > y.voter ? 1 : 0));
}

describe("reading features as the owner", () => {
  it("answers AdminFeatureObject: counts shown although show_votes is false, is_public, author, position, weighted_score", async () => {
    const p = await ctx.importProject(board());
    const { ids } = p.ids;
    const got = await read<AdminFeature>(p, `${admin(p)}/features/${ids.features.main}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toMatchObject({
      id: ids.features.main,
      vote_count: 2,
      score: 4,
      weighted_score: 4,
      has_voted: false,
      is_public: true,
      merged_into: null,
      author_voter_id: null,
      effort: null,
      comment_count: 0,
      view_count: 0,
    });
    const dup = await read<AdminFeature>(p, `${admin(p)}/features/${ids.features.dup}`);
    expect(dup.body.data).toMatchObject({ author_voter_id: ids.voters.c, comment_count: 2, tags: [{ id: ids.tags["t-ui"], name: "UI" }] });
    // The public board hides the counts; the owner's object never does.
    expect((await read<PublicFeature>(p, `${pub(p)}/features/${ids.features.main}`)).body.data.vote_count).toBeNull();
  });

  it("lists every feature with the filters: approved, status, board, column (-1), tag, q, sort", async () => {
    const p = await ctx.importProject(
      board({
        features: [
          { ref: "wait", board: "roadmap", column: "c-open", heading: "Awaiting review", is_approved: false },
          { ref: "ok", board: "roadmap", column: "c-open", heading: "Approved idea", tags: ["t-api"] },
          { ref: "old", board: "roadmap", status: "archived", heading: "Old stuff" },
          { ref: "phone", board: "mobile", column: "m-now", heading: "Phone widget", status: "planned" },
        ],
        votes: [],
        comments: [],
        likes: [],
      }),
    );
    const { ids } = p.ids;
    const list = async (query: string) => (await read<AdminFeatureList>(p, `${admin(p)}/features?${query}`)).body;
    const all = await list("sort=oldest");
    expect(all.data.map((f) => f.id)).toEqual([ids.features.wait, ids.features.ok, ids.features.old, ids.features.phone]);
    expect(all.meta).toMatchObject({ total: 4, page: 1 });
    expect(all.data.map((f) => f.is_public)).toEqual([false, true, false, true]);
    expect((await list("approved=false")).data.map((f) => f.id)).toEqual([ids.features.wait]);
    expect((await list("status=archived&status=planned&sort=oldest")).data.map((f) => f.id)).toEqual([
      ids.features.old,
      ids.features.phone,
    ]);
    expect((await list("board=mobile")).data.map((f) => f.id)).toEqual([ids.features.phone]);
    expect((await list("column=-1")).data.map((f) => f.id)).toEqual([ids.features.old]);
    expect((await list(`board=roadmap&column=${ids.columns["c-open"]}&sort=oldest`)).data.map((f) => f.id)).toEqual([
      ids.features.wait,
      ids.features.ok,
    ]);
    expect((await list(`tag=${ids.tags["t-api"]}`)).data.map((f) => f.id)).toEqual([ids.features.ok]);
    expect((await list("q=WIDGET")).data.map((f) => f.id)).toEqual([ids.features.phone]);
    expect((await list("per_page=1&page=2&sort=oldest")).meta).toMatchObject({ total: 4, total_pages: 4, has_more: true });
    // Public listing of the roadmap shows only the approved suggestion.
    expect((await read<PublicFeatureList>(p, `${pub(p)}/features`)).body.data.map((f) => f.id)).toEqual([ids.features.ok]);
  });
});

describe("creating and editing features (Rule 1)", () => {
  it("POST files a feature in the board's first column (on the roadmap the first with the status sent)", async () => {
    const p = await ctx.importProject(board());
    const { ids } = p.ids;
    const plain = await call<CreatedFeature>(p, "POST", "/features", { heading: "  New thing  " });
    expect(plain.status).toBe(201);
    expect(plain.body.data).toMatchObject({
      heading: "New thing",
      status: "open",
      column: { id: ids.columns["c-open"] },
      is_approved: true,
      board: { id: 0 },
    });
    const planned = await call<CreatedFeature>(p, "POST", "/features", {
      heading: "Planned",
      status: "planned",
      tag_ids: [ids.tags["t-api"]],
      author_voter_id: ids.voters.b,
      effort: 5,
      progress: 10,
    });
    expect(planned.body.data).toMatchObject({
      status: "planned",
      column: { id: ids.columns["c-planned"] },
      author_voter_id: ids.voters.b,
      effort: 5,
      progress: 10,
      tags: [{ id: ids.tags["t-api"] }],
    });
    const byColumn = await call<CreatedFeature>(p, "POST", "/features", { heading: "Done", column_id: ids.columns["c-done"] });
    expect(byColumn.body.data).toMatchObject({ status: "done", column: { id: ids.columns["c-done"] } });
    const custom = await call<CreatedFeature>(p, "POST", "/features", { heading: "Mobile", board: "mobile", status: "in_progress" });
    expect(custom.body.data).toMatchObject({ board: { slug: "mobile" }, status: "in_progress", column: { id: ids.columns["m-now"] } });
    const archived = await call<CreatedFeature>(p, "POST", "/features", { heading: "Gone", status: "archived" });
    expect(archived.body.data).toMatchObject({ status: "archived", column: { id: -1 } });
    // Public board lists the new approved features at once.
    const listed = (await read<PublicFeatureList>(p, `${pub(p)}/features?sort=new`)).body.data.map((f) => f.id);
    expect(listed).toContain(plain.body.data.id);
    expect(listed).toContain(planned.body.data.id);
  });

  it("PATCH: column decides the status on the roadmap, status alone moves to its first column, archived to -1 and back", async () => {
    const p = await ctx.importProject(board());
    const { ids } = p.ids;
    const path = `/features/${ids.features.other}`;
    expect((await call<PatchedFeature>(p, "PATCH", path, { column_id: ids.columns["c-done"] })).body.data).toMatchObject({
      status: "done",
      column: { id: ids.columns["c-done"] },
    });
    expect((await call<PatchedFeature>(p, "PATCH", path, { status: "planned" })).body.data).toMatchObject({
      status: "planned",
      column: { id: ids.columns["c-planned"] },
    });
    expect((await call<PatchedFeature>(p, "PATCH", path, { status: "archived" })).body.data).toMatchObject({
      status: "archived",
      column: { id: -1 },
    });
    expect((await call<PatchedFeature>(p, "PATCH", path, { column_id: ids.columns["c-planned2"] })).body.data).toMatchObject({
      status: "planned",
      column: { id: ids.columns["c-planned2"] },
    });
    // Custom board: status and column independent; a move sends board and column_id together.
    const moved = await call<PatchedFeature>(p, "PATCH", path, { board: "mobile", column_id: ids.columns["m-later"] });
    expect(moved.body.data).toMatchObject({ board: { slug: "mobile" }, column: { id: ids.columns["m-later"] }, status: "planned" });
    expect((await call<PatchedFeature>(p, "PATCH", path, { status: "done" })).body.data).toMatchObject({
      status: "done",
      column: { id: ids.columns["m-later"] },
    });
    expect((await call<PatchedFeature>(p, "PATCH", path, { column_id: ids.columns["m-now"] })).body.data).toMatchObject({
      status: "done",
      column: { id: ids.columns["m-now"] },
    });
    const back = await call<PatchedFeature>(p, "PATCH", path, { board: "roadmap", column_id: ids.columns["c-open"] });
    expect(back.body.data).toMatchObject({ board: { id: 0 }, status: "open", column: { id: ids.columns["c-open"] } });
  });

  it("PATCH is partial: absent keys unchanged, null clears, and is_approved false takes a suggestion off public listings at once", async () => {
    const p = await ctx.importProject(board());
    const { ids } = p.ids;
    const path = `/features/${ids.features.dup}`;
    await call(p, "PATCH", path, {
      description: "Body",
      progress: 50,
      effort: 3,
      developer_response: "Soon",
      start_date: "2026-12-01T00:00:00Z",
    });
    const cleared = await call<PatchedFeature>(p, "PATCH", path, { description: null, progress: null, start_date: null, tag_ids: [] });
    expect(cleared.body.data).toMatchObject({
      heading: "Dark theme",
      description: null,
      progress: null,
      effort: 3,
      developer_response: "Soon",
      start_date: null,
      tags: [],
    });
    expect((await read<PublicFeatureList>(p, `${pub(p)}/features`)).body.data.map((f) => f.id)).toContain(ids.features.dup);
    const hidden = await call<PatchedFeature>(p, "PATCH", path, { is_approved: false });
    expect(hidden.body.data).toMatchObject({ is_approved: false, is_public: false, vote_count: 2 });
    expect((await read<PublicFeatureList>(p, `${pub(p)}/features`)).body.data.map((f) => f.id)).not.toContain(ids.features.dup);
    expect((await read<PublicFeature>(p, `${pub(p)}/features/${ids.features.dup}`)).status).toBe(404);
    await exact(p);
  });
});

describe("deleting a feature (Rule 3)", () => {
  it("removes its votes, comments and likes; voters' counts and the project's voter count stay exact", async () => {
    const p = await ctx.importProject(board());
    const { ids } = p.ids;
    const before = (await read<BoardDocument>(p, pub(p))).body.data.project.voter_count;
    expect(before).toBe(3);
    const gone = await call<DeletedFeature>(p, "DELETE", `/features/${ids.features.dup}`);
    expect(gone).toMatchObject({ status: 200, body: { data: { deleted: true, id: ids.features.dup } } });
    // b voted only on the deleted feature: no longer a voter with votes.
    expect((await read<BoardDocument>(p, pub(p))).body.data.project.voter_count).toBe(2);
    expect((await read<PublicFeature>(p, `${pub(p)}/features/${ids.features.dup}`)).status).toBe(404);
    expect((await call(p, "GET", `/features/${ids.features.dup}`)).status).toBe(404);
    expect(await ctx.db.selectFrom("comments").select("id").where("feature_id", "=", ids.features.dup).execute()).toEqual([]);
    await exact(p);
    expect((await call(p, "DELETE", `/features/${ids.features.dup}`)).status).toBe(404);
  });
});

describe("merging and unmerging (Rule 2)", () => {
  it("moves votes, keeps the earlier vote of a voter who had both, archives the duplicate; unmerge puts back exactly what moved", async () => {
    const p = await ctx.importProject(board());
    const { ids } = p.ids;
    const dupVotes = await votesOf(ids.features.dup);
    const mainVotes = await votesOf(ids.features.main);
    const merged = await call<Merged>(p, "POST", `/features/${ids.features.dup}/merge`, { into_id: ids.features.main });
    expect(merged.status).toBe(200);
    // Target: a (earlier vote from dup, weight 3), b (moved), c (own) -> 3 votes, weighted 3 + 1 + 1.
    expect(merged.body.data).toMatchObject({ id: ids.features.main, vote_count: 3, weighted_score: 5 });
    expect(await votesOf(ids.features.main)).toEqual(
      byVoter([
        { voter: ids.voters.a, weight: 3, at: "2026-11-01T00:00:00.000Z" },
        { voter: ids.voters.b, weight: 1, at: "2026-11-02T00:00:00.000Z" },
        { voter: ids.voters.c, weight: 1, at: "2026-11-03T00:00:00.000Z" },
      ]),
    );
    const source = (await call<AdminFeature>(p, "GET", `/features/${ids.features.dup}`)).body.data;
    expect(source).toMatchObject({
      status: "archived",
      column: { id: -1 },
      vote_count: 0,
      comment_count: 2,
      merged_into: { id: ids.features.main, heading: "Dark mode" },
      linked_feature: { id: ids.features.main },
    });
    // Voters' has_voted follow the votes; the project's voter count is unchanged (3 voters).
    const identity = await read<BoardDocument>(p, pub(p));
    expect(identity.body.data.project.voter_count).toBe(3);
    await exact(p);
    // 409 cases
    expect(
      (await call<OwnerErrorAnswer>(p, "POST", `/features/${ids.features.dup}/merge`, { into_id: ids.features.other })).body.error.code,
    ).toBe("already_exists");
    expect(
      (await call<OwnerErrorAnswer>(p, "POST", `/features/${ids.features.other}/merge`, { into_id: ids.features.dup })).body.error.code,
    ).toBe("already_exists");
    expect((await call(p, "POST", `/features/${ids.features.other}/merge`, { into_id: ids.features.other })).status).toBe(409);
    expect((await call<OwnerErrorAnswer>(p, "POST", `/features/${ids.features.other}/unmerge`)).body.error).toMatchObject({
      code: "not_found",
    });
    expect((await call(p, "POST", `/features/${ids.features.other}/unmerge`)).status).toBe(409);

    const unmerged = await call<Unmerged>(p, "POST", `/features/${ids.features.dup}/unmerge`);
    expect(unmerged.status).toBe(200);
    expect(unmerged.body.data).toMatchObject({
      status: "open",
      column: { id: ids.columns["c-open"] },
      merged_into: null,
      linked_feature: null,
      vote_count: 2,
    });
    expect(await votesOf(ids.features.dup)).toEqual(dupVotes);
    expect(await votesOf(ids.features.main)).toEqual(mainVotes);
    await exact(p);
  });

  it("a voter's has_voted and voted_feature_ids follow the votes; the public board updates at once", async () => {
    const token = `anon-x-${Date.now()}-${Math.random()}`;
    const p = await ctx.importProject(
      board({
        voters: [{ ref: "boss", role: "owner" }, { ref: "c" }, { ref: "x", anon_token: token }],
        votes: [{ voter: "x", feature: "dup" }],
        comments: [],
        likes: [],
      }),
    );
    const { ids } = p.ids;
    const as = { "X-VF-Anon": token };
    expect((await read<PublicFeature>(p, `${pub(p)}/features/${ids.features.main}`, as)).body.data.has_voted).toBe(false);
    await call(p, "POST", `/features/${ids.features.dup}/merge`, { into_id: ids.features.main });
    expect((await read<PublicFeature>(p, `${pub(p)}/features/${ids.features.main}`, as)).body.data).toMatchObject({
      has_voted: true,
      vote_count: null,
    });
    const identity = await ctx.send("POST", `${pub(p)}/identity`, p.secretKey, { anon_token: token });
    expect((await parse<Identity>(identity)).data.voted_feature_ids).toEqual([ids.features.main]);
    expect((await read<PublicFeatureList>(p, `${pub(p)}/features?sort=new`)).body.data.map((f) => f.id)).not.toContain(ids.features.dup);
    await call(p, "POST", `/features/${ids.features.dup}/unmerge`);
    expect((await read<PublicFeature>(p, `${pub(p)}/features/${ids.features.main}`, as)).body.data.has_voted).toBe(false);
    expect((await read<PublicFeatureList>(p, `${pub(p)}/features?sort=new`)).body.data.map((f) => f.id)).toContain(ids.features.dup);
    await exact(p);
  });
});
