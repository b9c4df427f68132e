/**
 * The voter's subscription routes (engagement-api-v3.md, "Common rules" and "Subscriptions"):
 * GET /projects/{slug}/subscriptions, PUT and DELETE /projects/{slug}/features/{id}/subscription.
 * Identity (401 identity_required / identity_invalid), visibility (404 not_found; "Visible" as on
 * the public routes plus the voter's own suggestions), paging and order, the key's read and write
 * budgets, Idempotency-Key, and PUT / DELETE semantics (reason manual, opt-out).
 */
import { SignJWT } from "jose";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Answer,
  body,
  createTestContext,
  type ErrorAnswer,
  type ImportedProject,
  type SnapshotParts,
  type TestContext,
  uniqueSlug,
} from "./support/harness.ts";

type ListAnswer = Answer<"/api/v3/projects/{slug}/subscriptions", "get">;
type PutAnswer = Answer<"/api/v3/projects/{slug}/features/{id}/subscription", "put">;
type DeleteAnswer = Answer<"/api/v3/projects/{slug}/features/{id}/subscription", "delete">;

const SSO_SECRET = "subscriptions-sso-secret-0123456789abcdef";
let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ RATE_LIMIT_READS_PER_MINUTE: "900", RATE_LIMIT_WRITES_PER_MINUTE: "700" });
});
afterAll(() => ctx.close());

/**
 * Voters ada, bob, cy; features in every column, an archived one, a suggestion of cy awaiting
 * review and one of bob; settings as given (show_denied true, show_archived false by default).
 */
function board(settings: Record<string, unknown> = {}, extra: SnapshotParts = {}): SnapshotParts {
  const slug = uniqueSlug("subs");
  return {
    project: { slug, settings, sso_secret: SSO_SECRET },
    voters: ["ada", "bob", "cy"].map((ref) => ({ ref, anon_token: `anon-${ref}-${slug}` })),
    features: [
      { ref: "open", board: "roadmap", column: "c-open", heading: "Open" },
      { ref: "planned", board: "roadmap", column: "c-planned", heading: "Planned" },
      { ref: "done", board: "roadmap", column: "c-done", heading: "Done" },
      { ref: "denied", board: "roadmap", column: "c-denied", heading: "Denied" },
      { ref: "archived", board: "roadmap", column: null, status: "archived", heading: "Archived" },
      { ref: "cy-pending", board: "roadmap", column: "c-open", heading: "Cy's idea", is_approved: false, author: "cy" },
      { ref: "bob-pending", board: "roadmap", column: "c-open", heading: "Bob's idea", is_approved: false, author: "bob" },
    ],
    ...extra,
  };
}

const as = (project: ImportedProject, voter: string) => ({ "X-VF-Anon": `anon-${voter}-${project.slug}` });
const fid = (project: ImportedProject, ref: string): number => project.ids.ids.features[ref];
const list = (project: ImportedProject, headers: Record<string, string>, query = "") =>
  ctx.get(`/api/v3/projects/${project.slug}/subscriptions${query}`, project.embedKey, { Origin: "https://allowed.example", ...headers });
const put = (project: ImportedProject, feature: number | string, headers: Record<string, string>) =>
  ctx.send("PUT", `/api/v3/projects/${project.slug}/features/${feature}/subscription`, project.secretKey, undefined, headers);
const del = (project: ImportedProject, feature: number | string, headers: Record<string, string>) =>
  ctx.send("DELETE", `/api/v3/projects/${project.slug}/features/${feature}/subscription`, project.secretKey, undefined, headers);

async function rows(project: ImportedProject) {
  const { rows } = await sql<{ feature_id: number; voter: string; reason: string; opted_out: boolean; created_at: Date }>`
    SELECT s.feature_id, v.public_id AS voter, s.reason, s.opted_out, s.created_at
    FROM subscriptions s JOIN voters v ON v.id = s.voter_id JOIN projects p ON p.id = s.project_id
    WHERE p.slug = ${project.slug} ORDER BY s.feature_id, v.public_id`.execute(ctx.db);
  return rows;
}

const ssoToken = (sub: string) =>
  new SignJWT({ sub, name: sub })
    .setProtectedHeader({ alg: "HS256" })
    .setExpirationTime(Math.floor(Date.now() / 1000) + 600)
    .sign(new TextEncoder().encode(SSO_SECRET));

describe("PUT and DELETE /features/{id}/subscription", () => {
  it("PUT creates a manual subscription, answers it unchanged on a repeat, and GET lists it", async () => {
    const project = await ctx.importProject(board());
    const before = Date.now();
    const first = await put(project, fid(project, "planned"), as(project, "ada"));
    expect(first.status).toBe(200);
    const created = await body<PutAnswer>(first);
    expect(created).toEqual({
      data: { feature: { id: fid(project, "planned"), heading: "Planned" }, reason: "manual", created_at: expect.any(String) },
      meta: null,
      error: null,
    });
    expect(Date.parse(created.data.created_at)).toBeGreaterThanOrEqual(before - 1000);

    const again = await body<PutAnswer>(await put(project, fid(project, "planned"), as(project, "ada")));
    expect(again.data).toEqual(created.data);

    const listed = await body<ListAnswer>(await list(project, as(project, "ada")));
    expect(listed.data).toEqual([created.data]);
    expect(listed.meta).toEqual({ page: 1, per_page: 20, total: 1, total_pages: 1, has_more: false });
    // Another voter follows nothing.
    expect((await body<ListAnswer>(await list(project, as(project, "bob")))).data).toEqual([]);
  });

  it("PUT returns an automatic subscription as it is (reason and time kept)", async () => {
    const project = await ctx.importProject(board());
    const vote = await ctx.send(
      "POST",
      `/api/v3/projects/${project.slug}/features/${fid(project, "open")}/vote`,
      project.secretKey,
      undefined,
      as(project, "bob"),
    );
    expect(vote.status).toBe(200);
    const [stored] = await rows(project);
    const answer = await body<PutAnswer>(await put(project, fid(project, "open"), as(project, "bob")));
    expect(answer.data).toEqual({
      feature: { id: fid(project, "open"), heading: "Open" },
      reason: "vote",
      created_at: stored!.created_at.toISOString(),
    });
    expect(await rows(project)).toEqual([stored]);
  });

  it("DELETE records an opt-out (also with no subscription), hides it from GET, and PUT clears it as a new manual subscription", async () => {
    const project = await ctx.importProject(board());
    const planned = fid(project, "planned");
    const none = await del(project, planned, as(project, "ada"));
    expect(none.status).toBe(200);
    expect(await body<DeleteAnswer>(none)).toEqual({ data: { feature_id: planned, subscribed: false }, meta: null, error: null });
    expect(await rows(project)).toEqual([expect.objectContaining({ feature_id: planned, reason: "manual", opted_out: true })]);

    ctx.clock.pin(Date.parse("2026-11-20T10:00:00Z"));
    try {
      await put(project, planned, as(project, "ada"));
      ctx.clock.pin(Date.parse("2026-11-21T10:00:00Z"));
      const gone = await del(project, planned, as(project, "ada"));
      expect((await body<DeleteAnswer>(gone)).data).toEqual({ feature_id: planned, subscribed: false });
      // Twice: same answer, still one opt-out row.
      expect((await del(project, planned, as(project, "ada"))).status).toBe(200);
      expect(await rows(project)).toEqual([expect.objectContaining({ feature_id: planned, opted_out: true })]);
      expect((await body<ListAnswer>(await list(project, as(project, "ada")))).data).toEqual([]);

      ctx.clock.pin(Date.parse("2026-11-22T10:00:00Z"));
      const back = await body<PutAnswer>(await put(project, planned, as(project, "ada")));
      expect(back.data).toEqual({ feature: { id: planned, heading: "Planned" }, reason: "manual", created_at: "2026-11-22T10:00:00.000Z" });
      expect(await rows(project)).toEqual([expect.objectContaining({ feature_id: planned, opted_out: false, reason: "manual" })]);
    } finally {
      ctx.clock.release();
    }
  });

  it("answers 404 not_found for unknown, other projects', hidden and unapproved features, and 422 for a bad id", async () => {
    const project = await ctx.importProject(board({ show_denied: false }));
    const other = await ctx.importProject(board());
    const cases: [string, number | string][] = [
      ["unknown", 999_999_999],
      ["other project's", fid(other, "open")],
      ["denied with show_denied false", fid(project, "denied")],
      ["archived with show_archived false", fid(project, "archived")],
      ["another voter's suggestion awaiting review", fid(project, "cy-pending")],
    ];
    for (const [what, feature] of cases) {
      for (const send of [put, del]) {
        const response = await send(project, feature, as(project, "ada"));
        expect(response.status, what).toBe(404);
        expect((await body<ErrorAnswer>(response)).error).toMatchObject({ code: "not_found" });
      }
    }
    for (const bad of ["abc", "1.5", "0", "-3"]) {
      const response = await put(project, bad, as(project, "ada"));
      expect(response.status, bad).toBe(422);
      expect((await body<ErrorAnswer>(response)).error).toMatchObject({ code: "validation_failed", field: "id" });
    }
    expect(await rows(project)).toEqual([]);
  });

  it("lets a banned voter subscribe and opt out (only their notifications are withheld)", async () => {
    const parts = board();
    const slug = (parts.project as { slug: string }).slug;
    (parts.voters as object[]).push({ ref: "ben", anon_token: `anon-ben-${slug}`, banned: true });
    const project = await ctx.importProject(parts);
    expect((await put(project, fid(project, "open"), as(project, "ben"))).status).toBe(200);
    expect((await del(project, fid(project, "open"), as(project, "ben"))).status).toBe(200);
  });

  it("lets a voter subscribe to their own suggestion awaiting review and lists it to them only", async () => {
    const project = await ctx.importProject(board());
    const own = fid(project, "cy-pending");
    expect((await put(project, own, as(project, "cy"))).status).toBe(200);
    expect((await body<ListAnswer>(await list(project, as(project, "cy")))).data.map((s) => s.feature.id)).toEqual([own]);
    expect((await del(project, own, as(project, "cy"))).status).toBe(200);
  });

  it("shows denied and archived features when the project shows them", async () => {
    const project = await ctx.importProject(board({ show_denied: true, show_archived: true }));
    for (const ref of ["denied", "archived"]) expect((await put(project, fid(project, ref), as(project, "ada"))).status).toBe(200);
    expect((await body<ListAnswer>(await list(project, as(project, "ada")))).data).toHaveLength(2);
  });

  it("replays a PUT or DELETE with the same Idempotency-Key without running it again", async () => {
    const project = await ctx.importProject(board());
    const planned = fid(project, "planned");
    const key = { ...as(project, "ada"), "Idempotency-Key": `sub-${project.slug}` };
    const first = await put(project, planned, key);
    await del(project, planned, as(project, "ada"));
    const replay = await put(project, planned, key);
    expect(replay.status).toBe(200);
    expect(replay.headers.get("Idempotent-Replay")).toBe("true");
    expect(await body<PutAnswer>(replay)).toEqual(await body<PutAnswer>(first));
    // The replay changed nothing: the opt-out stands.
    expect(await rows(project)).toEqual([expect.objectContaining({ feature_id: planned, opted_out: true })]);
    // The same key on another route is a mismatch.
    const mismatch = await del(project, planned, key);
    expect(mismatch.status).toBe(409);
    expect((await body<ErrorAnswer>(mismatch)).error).toMatchObject({ code: "idempotency_mismatch" });
  });
});

describe("identity and budgets", () => {
  it("answers 401 identity_required without an identity and identity_invalid for a bad one, on every route", async () => {
    const project = await ctx.importProject(board());
    const open = fid(project, "open");
    const calls = [
      (headers: Record<string, string>) => list(project, headers),
      (headers: Record<string, string>) => put(project, open, headers),
      (headers: Record<string, string>) => del(project, open, headers),
    ];
    for (const call of calls) {
      const missing = await call({});
      expect(missing.status).toBe(401);
      expect((await body<ErrorAnswer>(missing)).error).toMatchObject({ code: "identity_required" });
      const empty = await call({ "X-VF-Anon": "" });
      expect((await body<ErrorAnswer>(empty)).error).toMatchObject({ code: "identity_required" });
      for (const bad of <Record<string, string>[]>[{ "X-VF-Anon": "anon-nobody" }, { "X-VF-Token": "not.a.jwt" }]) {
        const invalid = await call(bad);
        expect(invalid.status).toBe(401);
        expect((await body<ErrorAnswer>(invalid)).error).toMatchObject({ code: "identity_invalid" });
      }
    }
    expect(await rows(project)).toEqual([]);
  });

  it("takes an SSO token: a user never seen reads an empty list, and a PUT creates the voter", async () => {
    const project = await ctx.importProject(board());
    const token = await ssoToken(`u-${project.slug}`);
    const empty = await list(project, { "X-VF-Token": token });
    expect(empty.status).toBe(200);
    expect(await body<ListAnswer>(empty)).toEqual({
      data: [],
      meta: { page: 1, per_page: 20, total: 0, total_pages: 0, has_more: false },
      error: null,
    });
    expect((await put(project, fid(project, "open"), { "X-VF-Token": token })).status).toBe(200);
    expect((await body<ListAnswer>(await list(project, { "X-VF-Token": token }))).data).toHaveLength(1);
  });

  it("counts GET against the key's read budget and PUT / DELETE against its write budget", async () => {
    const project = await ctx.importProject(board());
    const read = await ctx.get(`/api/v3/projects/${project.slug}/subscriptions`, project.secretKey, as(project, "ada"));
    expect(read.headers.get("X-RateLimit-Limit")).toBe("900");
    const remaining = Number(read.headers.get("X-RateLimit-Remaining"));
    const write = await put(project, fid(project, "open"), as(project, "ada"));
    expect(write.headers.get("X-RateLimit-Limit")).toBe("700");
    expect((await del(project, fid(project, "open"), as(project, "ada"))).headers.get("X-RateLimit-Limit")).toBe("700");
    const again = await ctx.get(`/api/v3/projects/${project.slug}/subscriptions`, project.secretKey, as(project, "ada"));
    // Writes spent nothing of the read budget (unless the window turned meanwhile).
    expect([remaining - 1, 899]).toContain(Number(again.headers.get("X-RateLimit-Remaining")));
  });
});

describe("GET /subscriptions", () => {
  it("lists newest first, pages with meta, answers 304 to its ETag, and leaves out features the voter cannot see", async () => {
    const project = await ctx.importProject(
      board(
        { show_denied: true },
        {
          subscriptions: [
            { voter: "ada", feature: "open", reason: "vote", created_at: "2026-11-01T00:00:00Z" },
            { voter: "ada", feature: "planned", reason: "comment", created_at: "2026-11-03T00:00:00Z" },
            { voter: "ada", feature: "done", reason: "merge", created_at: "2026-11-02T00:00:00Z" },
            { voter: "ada", feature: "denied", reason: "manual", created_at: "2026-11-04T00:00:00Z" },
            // Hidden: archived (show_archived false) and another voter's suggestion under review.
            { voter: "ada", feature: "archived", reason: "vote", created_at: "2026-11-05T00:00:00Z" },
            { voter: "ada", feature: "cy-pending", reason: "vote", created_at: "2026-11-06T00:00:00Z" },
            // Not a subscription: an opt-out.
            { voter: "ada", feature: "bob-pending", reason: "vote", opted_out: true },
            { voter: "bob", feature: "bob-pending", reason: "author", created_at: "2026-11-07T00:00:00Z" },
          ],
        },
      ),
    );
    const all = await body<ListAnswer>(await list(project, as(project, "ada")));
    expect(all.data.map((s) => [s.feature.heading, s.reason, s.created_at])).toEqual([
      ["Denied", "manual", "2026-11-04T00:00:00.000Z"],
      ["Planned", "comment", "2026-11-03T00:00:00.000Z"],
      ["Done", "merge", "2026-11-02T00:00:00.000Z"],
      ["Open", "vote", "2026-11-01T00:00:00.000Z"],
    ]);
    expect(all.meta).toEqual({ page: 1, per_page: 20, total: 4, total_pages: 1, has_more: false });

    const second = await body<ListAnswer>(await list(project, as(project, "ada"), "?page=2&per_page=3"));
    expect(second.data.map((s) => s.feature.heading)).toEqual(["Open"]);
    expect(second.meta).toEqual({ page: 2, per_page: 3, total: 4, total_pages: 2, has_more: false });

    const badPage = await list(project, as(project, "ada"), "?per_page=101");
    expect(badPage.status).toBe(422);
    expect((await body<ErrorAnswer>(badPage)).error).toMatchObject({ code: "validation_failed", field: "per_page" });

    // Bob's own suggestion awaiting review is visible to him.
    expect((await body<ListAnswer>(await list(project, as(project, "bob")))).data.map((s) => s.feature.heading)).toEqual(["Bob's idea"]);

    const first = await list(project, as(project, "ada"));
    const etag = first.headers.get("ETag");
    expect(etag).toBeTruthy();
    expect((await list(project, { ...as(project, "ada"), "If-None-Match": etag! })).status).toBe(304);
  });
});
