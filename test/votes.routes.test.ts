/**
 * POST and DELETE /projects/{slug}/features/{id}/vote (contract, "Taking part" rules 2-4,
 * VoteObject): counters on the feature, the voter and the project move with the vote row;
 * 409 already_exists / 409 not_found, 403 not_allowed, 404 for hidden or unknown features.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestContext,
  type ImportedProject,
  type Schemas,
  type SnapshotParts,
  type TestContext,
  uniqueSlug,
} from "./support/harness.ts";

let ctx: TestContext;

/** Voters ada (tier x3), bob, ben (banned), cy; features across votable and closed columns. */
function voteSnapshot(settings: Record<string, unknown> = {}, extra: SnapshotParts = {}): SnapshotParts {
  const slug = uniqueSlug("vote");
  return {
    project: { slug, settings },
    tiers: [{ ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 3 }],
    voters: ["ada", "bob", "ben", "cy"].map((ref) => ({
      ref,
      anon_token: `anon-${ref}-${slug}`,
      tier: ref === "ada" ? "pro" : null,
      banned: ref === "ben",
    })),
    features: [
      { ref: "open", board: "roadmap", column: "c-open", heading: "Open" },
      { ref: "planned", board: "roadmap", column: "c-planned", heading: "Planned" },
      { ref: "done", board: "roadmap", column: "c-done", heading: "Done" },
      { ref: "denied", board: "roadmap", column: "c-denied", heading: "Denied" },
      { ref: "archived", board: "roadmap", column: null, status: "archived", heading: "Archived" },
      { ref: "pending", board: "roadmap", column: "c-open", heading: "Pending", is_approved: false, author: "cy" },
    ],
    votes: [{ voter: "bob", feature: "done" }],
    ...extra,
  };
}

const as = (voter: string, project: ImportedProject) => ({ "X-VF-Anon": `anon-${voter}-${project.slug}` });
const fid = (project: ImportedProject, ref: string): number => project.ids.ids.features[ref];

async function call(method: "POST" | "DELETE", project: ImportedProject, feature: number | string, voter: string | null) {
  const response = await ctx.send(
    method,
    `/api/v3/projects/${project.slug}/features/${feature}/vote`,
    project.secretKey,
    undefined,
    voter ? as(voter, project) : {},
  );
  return { status: response.status, body: await response.json() };
}
const vote = (p: ImportedProject, f: number | string, voter: string | null = "ada") => call("POST", p, f, voter);
const withdraw = (p: ImportedProject, f: number | string, voter: string | null = "ada") => call("DELETE", p, f, voter);

/** Stored counters of a feature, of a voter, and of the project, read from the database. */
async function counters(project: ImportedProject, feature: string, voter: string) {
  const row = await sql<{
    vote_count: number;
    weighted_score: number;
    trending_score: number | null;
    rows: number;
    voter_votes: number;
    voter_count: number;
  }>`SELECT f.vote_count, f.weighted_score, f.trending_score,
      (SELECT count(*)::int FROM votes WHERE feature_id = f.id) AS rows,
      (SELECT v.vote_count FROM voters v WHERE v.public_id = ${project.ids.ids.voters[voter]}) AS voter_votes,
      (SELECT coalesce(sum(c.voter_count), 0)::int FROM project_voter_counts c WHERE c.project_id = p.id) AS voter_count
    FROM features f JOIN projects p ON p.id = f.project_id WHERE f.id = ${fid(project, feature)}`.execute(ctx.db);
  return row.rows[0]!;
}

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

describe("vote and withdraw", () => {
  it("records a vote, moves every counter, and takes it all back on withdrawal", async () => {
    const project = await ctx.importProject(voteSnapshot());
    const before = await counters(project, "open", "bob");
    expect(before).toMatchObject({ vote_count: 0, weighted_score: 0, trending_score: null, rows: 0, voter_votes: 1, voter_count: 1 });

    const cast = await vote(project, fid(project, "open"), "bob");
    expect(cast.status).toBe(200);
    expect(cast.body).toEqual({
      data: { feature_id: fid(project, "open"), has_voted: true, vote_count: 1, score: 1 },
      meta: null,
      error: null,
    });
    const during = await counters(project, "open", "bob");
    expect(during).toMatchObject({ vote_count: 1, weighted_score: 1, rows: 1, voter_votes: 2, voter_count: 1 });
    expect(during.trending_score).toEqual(expect.any(Number));

    const read = await ctx.get(`/api/v3/projects/${project.slug}/features/${fid(project, "open")}`, project.secretKey, as("bob", project));
    expect((await read.json()).data).toMatchObject({ has_voted: true, vote_count: 1, score: 1 });

    const back = await withdraw(project, fid(project, "open"), "bob");
    expect(back.status).toBe(200);
    expect(back.body).toEqual({
      data: { feature_id: fid(project, "open"), has_voted: false, vote_count: 0, score: 0 },
      meta: null,
      error: null,
    });
    expect(await counters(project, "open", "bob")).toMatchObject({
      vote_count: 0,
      weighted_score: 0,
      trending_score: null,
      rows: 0,
      voter_votes: 1,
      voter_count: 1,
    });
  });

  it("counts a voter in voter_count from their first vote until their last is withdrawn", async () => {
    const project = await ctx.importProject(voteSnapshot());
    expect((await counters(project, "open", "cy")).voter_count).toBe(1);
    await vote(project, fid(project, "open"), "cy");
    await vote(project, fid(project, "planned"), "cy");
    expect(await counters(project, "open", "cy")).toMatchObject({ voter_votes: 2, voter_count: 2 });
    await withdraw(project, fid(project, "open"), "cy");
    expect(await counters(project, "open", "cy")).toMatchObject({ voter_votes: 1, voter_count: 2 });
    await withdraw(project, fid(project, "planned"), "cy");
    expect(await counters(project, "open", "cy")).toMatchObject({ voter_votes: 0, voter_count: 1 });
  });

  it("answers 409 already_exists for a second vote and 409 not_found for a withdrawal never cast", async () => {
    const project = await ctx.importProject(voteSnapshot());
    expect((await vote(project, fid(project, "planned"))).status).toBe(200);
    const twice = await vote(project, fid(project, "planned"));
    expect(twice.status).toBe(409);
    expect(twice.body).toEqual({ data: null, meta: null, error: { code: "already_exists", field: null, message: expect.any(String) } });
    expect(await counters(project, "planned", "ada")).toMatchObject({ vote_count: 1, rows: 1, voter_votes: 1 });

    const never = await withdraw(project, fid(project, "open"));
    expect(never.status).toBe(409);
    expect(never.body).toEqual({ data: null, meta: null, error: { code: "not_found", field: null, message: expect.any(String) } });
    expect((await withdraw(project, fid(project, "planned"))).status).toBe(200);
    expect((await withdraw(project, fid(project, "planned"))).status).toBe(409);
  });

  it("weighs a vote by the voter's tier multiplier and reports the weighted score", async () => {
    const project = await ctx.importProject(voteSnapshot({ score_is_weighted: true }));
    expect((await vote(project, fid(project, "open"), "ada")).body.data).toEqual({
      feature_id: fid(project, "open"),
      has_voted: true,
      vote_count: 1,
      score: 3,
    });
    expect((await vote(project, fid(project, "open"), "bob")).body.data).toMatchObject({ vote_count: 2, score: 4 });
    expect((await withdraw(project, fid(project, "open"), "ada")).body.data).toMatchObject({ has_voted: false, vote_count: 1, score: 1 });
    expect(await counters(project, "open", "ada")).toMatchObject({ vote_count: 1, weighted_score: 1, rows: 1 });
  });

  it("sends null counts when the project hides votes", async () => {
    const project = await ctx.importProject(voteSnapshot({ show_votes: false }));
    expect((await vote(project, fid(project, "open"))).body.data).toEqual({
      feature_id: fid(project, "open"),
      has_voted: true,
      vote_count: null,
      score: null,
    });
    expect((await withdraw(project, fid(project, "open"))).body.data).toEqual({
      feature_id: fid(project, "open"),
      has_voted: false,
      vote_count: null,
      score: null,
    });
  });

  it("lets a banned voter vote and withdraw", async () => {
    const project = await ctx.importProject(voteSnapshot());
    expect((await vote(project, fid(project, "open"), "ben")).status).toBe(200);
    expect((await withdraw(project, fid(project, "open"), "ben")).status).toBe(200);
  });

  it("moves a fresh vote to the top of the trending order", async () => {
    const project = await ctx.importProject(
      voteSnapshot(
        {},
        {
          votes: [
            { voter: "bob", feature: "open", created_at: "2026-01-01T00:00:00Z" },
            { voter: "cy", feature: "open", created_at: "2026-01-02T00:00:00Z" },
          ],
        },
      ),
    );
    await vote(project, fid(project, "planned"), "ada");
    const listed = await (await ctx.get(`/api/v3/projects/${project.slug}/features?sort=trending`, project.secretKey)).json();
    expect((listed.data as Schemas["FeatureObject"][]).map((feature) => feature.id).slice(0, 2)).toEqual([
      fid(project, "planned"),
      fid(project, "open"),
    ]);
  });
});

describe("refusals", () => {
  let project: ImportedProject;
  beforeAll(async () => {
    project = await ctx.importProject(voteSnapshot());
  });

  it.each(["done", "denied"])("answers 403 not_allowed for a feature in a column that takes no votes (%s)", async (ref) => {
    const refused = await vote(project, fid(project, ref));
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("not_allowed");
  });

  it("still lets a voter withdraw from a column that takes no votes", async () => {
    const back = await withdraw(project, fid(project, "done"), "bob");
    expect(back.status).toBe(200);
    expect(back.body.data).toMatchObject({ has_voted: false, vote_count: 0 });
  });

  it("answers 403 not_allowed when the project takes no votes, and for an archived feature", async () => {
    const closed = await ctx.importProject(voteSnapshot({ allow_voting: false, show_archived: true }));
    for (const ref of ["open", "archived"]) {
      const refused = await vote(closed, fid(closed, ref));
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe("not_allowed");
    }
  });

  it("answers 404 for unknown, hidden and other projects' features", async () => {
    const other = await ctx.importProject(voteSnapshot());
    for (const feature of [99999999, fid(project, "archived"), fid(project, "pending"), fid(other, "open")]) {
      for (const send of [vote, withdraw]) {
        const missing = await send(project, feature);
        expect(missing.status).toBe(404);
        expect(missing.body.error.code).toBe("not_found");
      }
    }
    const hiddenDenied = await ctx.importProject(voteSnapshot({ show_denied: false }));
    expect((await vote(hiddenDenied, fid(hiddenDenied, "denied"))).status).toBe(404);
  });

  it("lets the author vote on their own suggestion awaiting review", async () => {
    expect((await vote(project, fid(project, "pending"), "cy")).status).toBe(200);
  });

  it("answers 422 naming id for a malformed feature id", async () => {
    const bad = await vote(project, "abc");
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatchObject({ code: "validation_failed", field: "id" });
  });

  it("answers 401 identity_required without a voter identity", async () => {
    for (const send of [vote, withdraw]) {
      const anonymous = await send(project, fid(project, "open"), null);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.error.code).toBe("identity_required");
    }
  });
});
