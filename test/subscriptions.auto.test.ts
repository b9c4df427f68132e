/**
 * Subscriptions a change makes by itself (engagement-api-v3.md, "Subscriptions" rules 1-3):
 * suggesting (author), voting (vote), commenting or replying (comment), an owner's feature with
 * author_voter_id (author) and an owner's comment (comment, for author_voter_id); an existing row
 * keeps its reason and time, an opt-out is never undone by them, a withdrawal keeps the
 * subscription, a refused change subscribes nobody; a merge copies the duplicate's subscribers
 * to the target (merge) except voters holding a row there; unmerging leaves them; deleting a
 * feature or erasing a voter deletes their rows.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type ImportedProject, type SnapshotParts, type TestContext, uniqueSlug } from "./support/harness.ts";

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const VOTERS = ["ada", "bob", "cy", "dan", "eve", "owen"];

/** Voters (owen is the project's owner), an open and a planned feature, a closed one. */
function board(extra: SnapshotParts = {}): SnapshotParts {
  const slug = uniqueSlug("autosub");
  return {
    project: { slug },
    voters: VOTERS.map((ref) => ({ ref, anon_token: `anon-${ref}-${slug}`, role: ref === "owen" ? "owner" : null })),
    features: [
      { ref: "open", board: "roadmap", column: "c-open", heading: "Open" },
      { ref: "planned", board: "roadmap", column: "c-planned", heading: "Planned" },
      { ref: "done", board: "roadmap", column: "c-done", heading: "Done" },
    ],
    ...extra,
  };
}

const as = (project: ImportedProject, voter: string) => ({ "X-VF-Anon": `anon-${voter}-${project.slug}` });
const fid = (project: ImportedProject, ref: string): number => project.ids.ids.features[ref];

async function send(project: ImportedProject, method: string, path: string, voter: string | null, payload?: unknown) {
  const response = await ctx.send(
    method,
    `/api/v3/projects/${project.slug}${path}`,
    project.secretKey,
    payload,
    voter === null ? {} : as(project, voter),
  );
  return { status: response.status, body: await response.json() };
}
const vote = (p: ImportedProject, feature: number, voter: string) => send(p, "POST", `/features/${feature}/vote`, voter);
const withdraw = (p: ImportedProject, feature: number, voter: string) => send(p, "DELETE", `/features/${feature}/vote`, voter);
const comment = (p: ImportedProject, feature: number, voter: string, parent_id?: number) =>
  send(p, "POST", `/features/${feature}/comments`, voter, { content: `from ${voter}`, ...(parent_id ? { parent_id } : {}) });
const optOut = (p: ImportedProject, feature: number, voter: string) => send(p, "DELETE", `/features/${feature}/subscription`, voter);
const optIn = (p: ImportedProject, feature: number, voter: string) => send(p, "PUT", `/features/${feature}/subscription`, voter);
const admin = (p: ImportedProject, method: string, path: string, payload?: unknown) => send(p, method, `/admin${path}`, null, payload);

interface Row {
  feature_id: number;
  voter: string;
  reason: string;
  opted_out: boolean;
  created_at: Date;
}

/** Every subscription row of the project, by feature then voter ref. */
async function rows(project: ImportedProject): Promise<Row[]> {
  const refOf = new Map(Object.entries(project.ids.ids.voters as Record<string, string>).map(([ref, id]) => [id, ref]));
  const { rows } = await sql<Omit<Row, "voter"> & { public_id: string }>`
    SELECT s.feature_id, v.public_id, s.reason, s.opted_out, s.created_at
    FROM subscriptions s JOIN voters v ON v.id = s.voter_id JOIN projects p ON p.id = s.project_id
    WHERE p.slug = ${project.slug}`.execute(ctx.db);
  return rows
    .map(({ public_id, ...row }) => ({ ...row, voter: refOf.get(public_id) ?? public_id }))
    .sort((a, b) => a.feature_id - b.feature_id || a.voter.localeCompare(b.voter));
}
const brief = (list: Row[]) => list.map((row) => [row.feature_id, row.voter, row.reason, row.opted_out]);

describe("rule 1: changes subscribe their author", () => {
  it("a suggestion subscribes its author with reason author, at the suggestion's time", async () => {
    const project = await ctx.importProject(board());
    const created = await send(project, "POST", "/features", "ada", { heading: "Export to CSV", description: "Please" });
    expect(created.status).toBe(201);
    const stored = await rows(project);
    expect(brief(stored)).toEqual([[created.body.data.id, "ada", "author", false]]);
    expect(stored[0]!.created_at.toISOString()).toBe(created.body.data.created_at);
  });

  it("a vote subscribes the voter with reason vote; a repeat, a withdrawal and a new vote keep that row as it is", async () => {
    const project = await ctx.importProject(board());
    const open = fid(project, "open");
    ctx.clock.pin(Date.parse("2026-11-20T08:00:00Z"));
    try {
      expect((await vote(project, open, "bob")).status).toBe(200);
      const first = await rows(project);
      expect(brief(first)).toEqual([[open, "bob", "vote", false]]);
      expect(first[0]!.created_at.toISOString()).toBe("2026-11-20T08:00:00.000Z");
      ctx.clock.pin(Date.parse("2026-11-21T08:00:00Z"));
      expect((await vote(project, open, "bob")).status).toBe(409);
      expect((await withdraw(project, open, "bob")).status).toBe(200);
      expect(await rows(project)).toEqual(first);
      expect((await vote(project, open, "bob")).status).toBe(200);
      expect((await comment(project, open, "bob")).status).toBe(201);
      expect(await rows(project)).toEqual(first);
    } finally {
      ctx.clock.release();
    }
  });

  it("a comment and a reply subscribe their authors with reason comment", async () => {
    const project = await ctx.importProject(board());
    const planned = fid(project, "planned");
    const top = await comment(project, planned, "cy");
    expect(top.status).toBe(201);
    expect((await comment(project, planned, "dan", top.body.data.id)).status).toBe(201);
    expect(brief(await rows(project))).toEqual([
      [planned, "cy", "comment", false],
      [planned, "dan", "comment", false],
    ]);
  });

  it("an owner's feature with author_voter_id subscribes that voter (author); without one nobody", async () => {
    const project = await ctx.importProject(board());
    const withAuthor = await admin(project, "POST", "/features", { heading: "From the call", author_voter_id: project.ids.ids.voters.eve });
    expect(withAuthor.status).toBe(201);
    const without = await admin(project, "POST", "/features", { heading: "Ours" });
    expect(without.status).toBe(201);
    expect(brief(await rows(project))).toEqual([[withAuthor.body.data.id, "eve", "author", false]]);
  });

  it("an owner's PATCH naming an author subscribes nobody (only a new feature does)", async () => {
    const project = await ctx.importProject(board());
    const patched = await admin(project, "PATCH", `/features/${fid(project, "planned")}`, { author_voter_id: project.ids.ids.voters.eve });
    expect(patched.status).toBe(200);
    expect(await rows(project)).toEqual([]);
  });

  it("an owner's comment subscribes the voter named by author_voter_id (comment)", async () => {
    const project = await ctx.importProject(board());
    const open = fid(project, "open");
    const posted = await admin(project, "POST", `/features/${open}/comments`, {
      content: "On it",
      author_voter_id: project.ids.ids.voters.owen,
    });
    expect(posted.status).toBe(201);
    expect(brief(await rows(project))).toEqual([[open, "owen", "comment", false]]);
  });

  it("an existing subscription keeps its reason and time whatever comes later", async () => {
    const project = await ctx.importProject(board());
    const open = fid(project, "open");
    expect((await optIn(project, open, "ada")).status).toBe(200);
    const manual = await rows(project);
    await vote(project, open, "ada");
    await comment(project, open, "ada");
    expect(await rows(project)).toEqual(manual);
  });

  it("a refused vote or comment subscribes nobody", async () => {
    const project = await ctx.importProject(board());
    expect((await vote(project, fid(project, "done"), "ada")).status).toBe(403);
    expect((await comment(project, fid(project, "open"), "ada", 999_999_999)).status).toBe(422);
    expect((await vote(project, 999_999_999, "ada")).status).toBe(404);
    expect(await rows(project)).toEqual([]);
  });
});

describe("rule 2: opting out", () => {
  it("after DELETE, votes, comments and replies do not subscribe again; only PUT does", async () => {
    const project = await ctx.importProject(board());
    const open = fid(project, "open");
    await vote(project, open, "ada");
    expect((await optOut(project, open, "ada")).status).toBe(200);
    await withdraw(project, open, "ada");
    expect((await vote(project, open, "ada")).status).toBe(200);
    const top = await comment(project, open, "bob");
    expect((await comment(project, open, "ada")).status).toBe(201);
    expect((await comment(project, open, "ada", top.body.data.id)).status).toBe(201);
    expect(brief(await rows(project))).toEqual([
      [open, "ada", "vote", true],
      [open, "bob", "comment", false],
    ]);
    expect((await optIn(project, open, "ada")).body.data.reason).toBe("manual");
    expect(brief(await rows(project))).toContainEqual([open, "ada", "manual", false]);
  });

  it("an opt-out before any subscription also holds against a first vote and comment", async () => {
    const project = await ctx.importProject(board());
    const planned = fid(project, "planned");
    await optOut(project, planned, "cy");
    await vote(project, planned, "cy");
    await comment(project, planned, "cy");
    expect(brief(await rows(project))).toEqual([[planned, "cy", "manual", true]]);
  });
});

describe("rule 3: merges, deletion, erasure", () => {
  it("a merge subscribes the duplicate's subscribers to the target (merge), except opt-outs and voters with a row there", async () => {
    const project = await ctx.importProject(
      board({
        subscriptions: [
          // On the duplicate "open": ada and bob follow it, cy opted out of it.
          { voter: "ada", feature: "open", reason: "vote" },
          { voter: "bob", feature: "open", reason: "comment" },
          { voter: "cy", feature: "open", reason: "vote", opted_out: true },
          // dan follows both; eve opted out of the target.
          { voter: "dan", feature: "open", reason: "author" },
          { voter: "dan", feature: "planned", reason: "vote", created_at: "2026-11-01T00:00:00Z" },
          { voter: "eve", feature: "open", reason: "vote" },
          { voter: "eve", feature: "planned", reason: "manual", opted_out: true, created_at: "2026-11-02T00:00:00Z" },
        ],
      }),
    );
    const open = fid(project, "open");
    const planned = fid(project, "planned");
    const before = await rows(project);
    ctx.clock.pin(Date.parse("2026-11-24T12:00:00Z"));
    try {
      expect((await admin(project, "POST", `/features/${open}/merge`, { into_id: planned })).status).toBe(200);
    } finally {
      ctx.clock.release();
    }
    const after = await rows(project);
    const onTarget = after.filter((row) => row.feature_id === planned);
    expect(onTarget.map((row) => [row.voter, row.reason, row.opted_out, row.created_at.toISOString()])).toEqual([
      ["ada", "merge", false, "2026-11-24T12:00:00.000Z"],
      ["bob", "merge", false, "2026-11-24T12:00:00.000Z"],
      ["dan", "vote", false, "2026-11-01T00:00:00.000Z"],
      ["eve", "manual", true, "2026-11-02T00:00:00.000Z"],
    ]);
    // The duplicate's own rows stay.
    expect(after.filter((row) => row.feature_id === open)).toEqual(before.filter((row) => row.feature_id === open));

    expect((await admin(project, "POST", `/features/${open}/unmerge`)).status).toBe(200);
    expect(await rows(project)).toEqual(after);
  });

  it("deleting a feature deletes its subscriptions; erasing a voter deletes theirs", async () => {
    const project = await ctx.importProject(
      board({
        subscriptions: [
          { voter: "ada", feature: "open", reason: "vote" },
          { voter: "bob", feature: "open", reason: "manual", opted_out: true },
          { voter: "ada", feature: "planned", reason: "comment" },
          { voter: "bob", feature: "planned", reason: "vote" },
        ],
      }),
    );
    const open = fid(project, "open");
    const planned = fid(project, "planned");
    expect((await admin(project, "DELETE", `/features/${open}`)).status).toBe(200);
    expect(brief(await rows(project))).toEqual([
      [planned, "ada", "comment", false],
      [planned, "bob", "vote", false],
    ]);
    expect((await admin(project, "DELETE", `/voters/${project.ids.ids.voters.ada}`)).status).toBe(200);
    expect(brief(await rows(project))).toEqual([[planned, "bob", "vote", false]]);
  });
});
