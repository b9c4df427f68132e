/**
 * Owner feature and comment routes refusing bad input (owner-api-v3.md, "Common rules" and Rule
 * 1): 422 naming the field, unknown keys refused, ids of another project 404/422, nothing
 * changed; plus access (secret key only) and idempotent replays.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type ImportedProject, type SnapshotParts, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
let p: ImportedProject;
let other: ImportedProject;
beforeAll(async () => {
  ctx = await createTestContext();
  const custom = {
    ref: "mobile",
    kind: "custom",
    name: "Mobile",
    slug: "mobile",
    columns: [{ ref: "m1", name: "Later", position: 0, is_votable: true }],
  };
  const seed = (extra: SnapshotParts = {}) => ({
    boards: [
      {
        ref: "roadmap",
        kind: "roadmap",
        name: "Roadmap",
        slug: "roadmap",
        columns: [
          { ref: "c-open", name: "Suggestions", position: 0, is_votable: true, status: "open" },
          { ref: "c-done", name: "Done", position: 1, is_votable: false, status: "done" },
        ],
      },
      custom,
    ],
    tags: [{ ref: "t1", name: "UI" }],
    voters: [{ ref: "boss", role: "owner" }, { ref: "view", role: "viewer" }, { ref: "plain" }],
    features: [
      { ref: "f1", board: "roadmap", column: "c-open", heading: "One" },
      { ref: "f2", board: "roadmap", column: "c-done", heading: "Two" },
    ],
    comments: [{ ref: "k1", feature: "f1", voter: "plain", content: "hi" }],
    ...extra,
  });
  p = await ctx.importProject(seed());
  other = await ctx.importProject(seed());
});
afterAll(() => ctx.close());

const admin = (project: ImportedProject) => `/api/v3/projects/${project.slug}/admin`;
async function call(method: string, path: string, body?: unknown, key = p.secretKey, headers: Record<string, string> = {}) {
  const response = await ctx.send(method, `${admin(p)}${path}`, key, body, headers);
  return { status: response.status, body: await response.json(), headers: response.headers };
}
async function featureRow(id: number) {
  return ctx.db.selectFrom("features").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

describe("422 naming the field, nothing changed", () => {
  it.each([
    ["heading missing", "POST", {}, "heading"],
    ["blank heading", "POST", { heading: "   " }, "heading"],
    ["progress above 100", "POST", { heading: "x", progress: 101 }, "progress"],
    ["unknown key", "POST", { heading: "x", vote_count: 5 }, "vote_count"],
    ["unknown board", "POST", { heading: "x", board: "nope" }, "board"],
    ["status with no roadmap column", "POST", { heading: "x", status: "planned" }, "status"],
    ["bad date", "POST", { heading: "x", target_date: "tomorrow" }, "target_date"],
  ])("POST /features: %s", async (_name, method, body, field) => {
    const before = await ctx.db
      .selectFrom("features")
      .select("id")
      .where("project_id", "=", (await featureRow(p.ids.ids.features.f1)).project_id)
      .execute();
    const answer = await call(method, "/features", body);
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ data: null, meta: null, error: { code: "validation_failed", field } });
    const after = await ctx.db
      .selectFrom("features")
      .select("id")
      .where("project_id", "=", (await featureRow(p.ids.ids.features.f1)).project_id)
      .execute();
    expect(after).toHaveLength(before.length);
  });

  it("column or tag of another project, a column of another board, a tag that does not exist: 422 naming it", async () => {
    const { ids } = p.ids;
    const f1 = ids.features.f1;
    const before = await featureRow(f1);
    // Malformed on purpose: each breaks one bound or names an unknown field.
    const cases: [unknown, string][] = [
      [{ column_id: other.ids.ids.columns["c-done"] }, "column_id"],
      [{ column_id: ids.columns.m1 }, "column_id"],
      [{ column_id: 999999 }, "column_id"],
      [{ tag_ids: [other.ids.ids.tags.t1] }, "tag_ids"],
      [{ tag_ids: [ids.tags.t1, 999999] }, "tag_ids"],
      [{ board: "mobile" }, "column_id"],
      [{ board: "mobile", column_id: ids.columns["c-done"] }, "column_id"],
      [{ column_id: ids.columns["c-done"], status: "open" }, "status"],
      [{ author_voter_id: other.ids.ids.voters.plain }, "author_voter_id"],
      [{ heading: null }, "heading"],
      [{ is_pinned: "yes" }, "is_pinned"],
      [{ id: 5 }, "id"],
    ];
    for (const [body, field] of cases) {
      const answer = await call("PATCH", `/features/${f1}`, body);
      expect([answer.status, answer.body.error?.field]).toEqual([422, field]);
    }
    expect(await featureRow(f1)).toEqual(before);
    expect(await ctx.db.selectFrom("feature_tags").select("tag_id").where("feature_id", "=", f1).execute()).toEqual([]);
  });

  it("list filters: unknown board 422 board, column of another board or project 422 column", async () => {
    expect((await call("GET", "/features?board=nope")).body.error.field).toBe("board");
    expect((await call("GET", `/features?board=mobile&column=${p.ids.ids.columns["c-open"]}`)).body.error.field).toBe("column");
    expect((await call("GET", `/features?column=${other.ids.ids.columns["c-open"]}`)).body.error.field).toBe("column");
    expect((await call("GET", "/features?sort=trending")).body.error.field).toBe("sort");
    expect((await call("GET", "/features?approved=maybe")).body.error.field).toBe("approved");
  });

  it("ids of another project: 404 for the path, 422 into_id for the merge target; nothing changes", async () => {
    const theirs = other.ids.ids.features.f1;
    expect((await call("GET", `/features/${theirs}`)).status).toBe(404);
    expect((await call("PATCH", `/features/${theirs}`, { heading: "mine" })).status).toBe(404);
    expect((await call("DELETE", `/features/${theirs}`)).status).toBe(404);
    expect((await call("POST", `/features/${theirs}/merge`, { into_id: p.ids.ids.features.f1 })).status).toBe(404);
    const intoOther = await call("POST", `/features/${p.ids.ids.features.f1}/merge`, { into_id: theirs });
    expect([intoOther.status, intoOther.body.error.field]).toEqual([422, "into_id"]);
    expect(
      (await call("POST", `/features/${p.ids.ids.features.f1}/merge`, { into_id: p.ids.ids.features.f2, extra: 1 })).body.error.field,
    ).toBe("extra");
    expect((await featureRow(theirs)).heading).toBe("One");
    expect(await ctx.db.selectFrom("feature_merges").select("id").where("source_id", "=", p.ids.ids.features.f1).execute()).toEqual([]);
  });
});

describe("owner comments", () => {
  it("author must be a voter of the project with role owner or editor (422 author_voter_id); a reply's parent must be top level of that feature", async () => {
    const { ids } = p.ids;
    const path = `/features/${ids.features.f1}/comments`;
    for (const author of [ids.voters.view, ids.voters.plain, other.ids.ids.voters.boss, "nobody"]) {
      const answer = await call("POST", path, { content: "Hello", author_voter_id: author });
      expect([answer.status, answer.body.error.field]).toEqual([422, "author_voter_id"]);
    }
    expect((await call("POST", path, { content: "Hello" })).body.error.field).toBe("author_voter_id");
    expect((await call("POST", path, { content: "  ", author_voter_id: ids.voters.boss })).body.error.field).toBe("content");
    expect(
      (
        await call("POST", `/features/${ids.features.f2}/comments`, {
          content: "x",
          parent_id: ids.comments.k1,
          author_voter_id: ids.voters.boss,
        })
      ).body.error.field,
    ).toBe("parent_id");
    expect(
      (await call("POST", `/features/${other.ids.ids.features.f1}/comments`, { content: "x", author_voter_id: ids.voters.boss })).status,
    ).toBe(404);
    expect((await call("DELETE", `/comments/${other.ids.ids.comments.k1}`)).status).toBe(404);
    expect(
      await ctx.db.selectFrom("comments").select("id").where("feature_id", "in", [ids.features.f1, ids.features.f2]).execute(),
    ).toHaveLength(1);
  });
});

describe("access and replays", () => {
  it("embed key 403 not_allowed, another project's secret key 403 key_wrong_project, no key 401; identity headers ignored", async () => {
    for (const [method, path, body] of [
      ["GET", "/features", undefined],
      ["POST", "/features", { heading: "x" }],
      ["GET", "/comments", undefined],
      ["DELETE", `/comments/${p.ids.ids.comments.k1}`, undefined],
    ] as const) {
      expect((await call(method, path, body, p.embedKey)).body.error.code).toBe("not_allowed");
      expect((await call(method, path, body, other.secretKey)).body.error.code).toBe("key_wrong_project");
      const none = await ctx.app.request(`${admin(p)}${path}`, { method });
      expect(none.status).toBe(401);
    }
    const withIdentity = await call("GET", `/features/${p.ids.ids.features.f1}`, undefined, p.secretKey, { "X-VF-Anon": "garbage" });
    expect(withIdentity.status).toBe(200);
    expect(withIdentity.headers.get("cache-control")).toBe("private, max-age=0");
    const etag = withIdentity.headers.get("etag")!;
    expect((await ctx.get(`${admin(p)}/features/${p.ids.ids.features.f1}`, p.secretKey, { "If-None-Match": etag })).status).toBe(304);
  });

  it("a replayed POST with the same Idempotency-Key creates nothing new", async () => {
    const headers = { "Idempotency-Key": `create-${Date.now()}` };
    const first = await call("POST", "/features", { heading: "Once" }, p.secretKey, headers);
    const second = await call("POST", "/features", { heading: "Once" }, p.secretKey, headers);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replay")).toBe("true");
    expect(second.body.data.id).toBe(first.body.data.id);
    const projectId = (await featureRow(p.ids.ids.features.f1)).project_id;
    expect(
      await ctx.db.selectFrom("features").select("id").where("project_id", "=", projectId).where("heading", "=", "Once").execute(),
    ).toHaveLength(1);
  });
});
