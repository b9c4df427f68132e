/**
 * The import writer (imports-v3.md, "How an import runs" rules 2-4 and 7, "Mapping"; ImportData
 * fixtures built by hand): voters matched and created, features placed by status on the roadmap
 * or custom boards, tags, votes, comments, merges, releases and subscriptions, counters exact, a
 * second run that creates nothing, deleted and withdrawn records not brought back, a rolled-back
 * run that leaves every table as it was, and no event, notification or email.
 */
import { SignJWT } from "jose";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportSnapshot, portableSnapshot } from "../src/admin/snapshot-export.ts";
import { importSnapshot, SnapshotValidationError } from "../src/admin/snapshot-import.ts";
import type {
  ImportComment,
  ImportData,
  ImportFeature,
  ImportOptions,
  ImportPerson,
  ImportVote,
} from "../src/routes/imports/import-data.ts";
import { writeImport } from "../src/routes/imports/writer/index.ts";
import { castVote, withdrawVote } from "../src/routes/votes/votes.repository.ts";
import { counterProblems, projectIdOf } from "./support/counters.invariants.ts";
import { createTestContext, type SnapshotParts, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
}, 120_000);
afterAll(async () => {
  await ctx?.close();
});

const NOW = new Date("2026-12-01T12:00:00Z");
const ROADMAP = { boards: "roadmap", statusMap: {} } satisfies ImportOptions;

function person(sourceId: string, fields: Partial<ImportPerson> = {}): ImportPerson {
  return {
    sourceId,
    ssoId: null,
    name: sourceId,
    email: null,
    role: "voter",
    company: null,
    deleted: false,
    path: `users.json[${sourceId}]`,
    ...fields,
  };
}
function feature(sourceId: string, fields: Partial<ImportFeature> = {}): ImportFeature {
  return {
    sourceId,
    title: `Post ${sourceId}`,
    description: `About ${sourceId}`,
    status: null,
    boardSourceId: null,
    tagSourceIds: [],
    authorSourceId: null,
    createdAt: "2026-10-01T10:00:00Z",
    developerResponse: null,
    responseIsDenial: false,
    targetDate: null,
    approved: true,
    mergedIntoSourceId: null,
    path: `posts.json[${sourceId}]`,
    ...fields,
  };
}
function vote(featureSourceId: string, personSourceId: string, createdAt = "2026-10-05T10:00:00Z"): ImportVote {
  return { featureSourceId, personSourceId, createdAt, path: `votes.json[${featureSourceId}/${personSourceId}]` };
}
function comment(
  sourceId: string,
  featureSourceId: string,
  personSourceId: string | null,
  fields: Partial<ImportComment> = {},
): ImportComment {
  return {
    sourceId,
    featureSourceId,
    parentSourceId: null,
    personSourceId,
    content: `Comment ${sourceId}`,
    createdAt: "2026-10-06T10:00:00Z",
    path: `comments.json[${sourceId}]`,
    ...fields,
  };
}
function importData(fields: Partial<ImportData>): ImportData {
  return {
    source: "canny",
    people: [],
    boards: [],
    tags: [],
    features: [],
    votes: [],
    comments: [],
    releases: [],
    subscriptions: [],
    warnings: [],
    skipped: {},
    ...fields,
  };
}

/** A project whose roadmap has only an open and a done column, and voters to be matched. */
async function project(overrides: SnapshotParts = {}) {
  const imported = await ctx.importProject({
    boards: [
      {
        ref: "roadmap",
        kind: "roadmap",
        name: "Roadmap",
        slug: "roadmap",
        columns: [
          { ref: "c-open", name: "Suggestions", status: "open" },
          { ref: "c-done", name: "Shipped", status: "done", is_votable: false },
        ],
      },
    ],
    tags: [{ ref: "t-ui", name: "UI" }],
    voters: [
      { ref: "bob", kind: "sso", sso_id: "cust-bob", display_name: "Bob" },
      { ref: "cat", kind: "sso", sso_id: "cat-1", display_name: "Cat", email: "Cat@Example.com" },
    ],
    ...overrides,
  });
  return { ...imported, id: await projectIdOf(ctx.db, imported.slug) };
}

function run(projectId: number, data: ImportData, options: ImportOptions = ROADMAP, progress?: (done: number, total: number) => void) {
  return ctx.db
    .transaction()
    .execute((trx) =>
      writeImport(trx, { projectId, source: data.source, data, options, now: NOW, ...(progress ? { onProgress: progress } : {}) }),
    );
}

/** Runs the import and rolls its transaction back (a dry run as the job runner makes it). */
async function dryRun(projectId: number, data: ImportData, options: ImportOptions = ROADMAP) {
  let result: Awaited<ReturnType<typeof run>> | undefined;
  await ctx.db
    .transaction()
    .execute(async (trx) => {
      result = await writeImport(trx, { projectId, source: data.source, data, options, now: NOW });
      throw new Error("rollback");
    })
    .catch((e: unknown) => {
      if (!(e instanceof Error) || e.message !== "rollback") throw e;
    });
  return result!;
}

/** Rows per table that belong to the project (directly or through its features and voters). */
async function rowCounts(projectId: number): Promise<Record<string, number>> {
  const direct = [
    "boards",
    "columns",
    "tags",
    "voters",
    "features",
    "votes",
    "comments",
    "releases",
    "feature_merges",
    "subscriptions",
    "notifications",
    "emails",
    "events",
    "feature_tier_votes",
    "feature_similarity",
    "feature_similarity_postings",
    "project_voter_counts",
    "import_sources",
  ];
  const counts: Record<string, number> = {};
  for (const table of direct) {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(table)} WHERE project_id = ${projectId}`.execute(
      ctx.db,
    );
    counts[table] = rows[0]!.n;
  }
  const through = {
    feature_tags: sql`SELECT count(*)::int AS n FROM feature_tags t JOIN features f ON f.id = t.feature_id WHERE f.project_id = ${projectId}`,
    feature_search: sql`SELECT count(*)::int AS n FROM feature_search t JOIN features f ON f.id = t.feature_id WHERE f.project_id = ${projectId}`,
    release_features: sql`SELECT count(*)::int AS n FROM release_features t JOIN releases r ON r.id = t.release_id WHERE r.project_id = ${projectId}`,
    feature_merge_votes: sql`SELECT count(*)::int AS n FROM feature_merge_votes t JOIN feature_merges m ON m.id = t.merge_id WHERE m.project_id = ${projectId}`,
  };
  for (const [table, query] of Object.entries(through)) counts[table] = ((await query.execute(ctx.db)).rows[0] as { n: number }).n;
  // Stored counters too: a rolled-back run must leave them as they were.
  const { rows } = await sql<{ s: string }>`SELECT coalesce(sum(vote_count + weighted_score + comment_count + vote_milestone), 0)::text
      || '/' || round(coalesce(sum(trending_score), 0)::numeric, 6)::text AS s FROM features WHERE project_id = ${projectId}`.execute(
    ctx.db,
  );
  counts[`feature counters ${rows[0]!.s}`] = 1;
  return counts;
}

async function featureBySource(projectId: number, sourceId: string) {
  return ctx.db
    .selectFrom("import_sources")
    .innerJoin("features", "features.id", "import_sources.target_id")
    .innerJoin("columns", (j) => j.onRef("columns.id", "=", "features.column_id"))
    .selectAll("features")
    .select("columns.name as column_name")
    .where("import_sources.project_id", "=", projectId)
    .where("import_sources.kind", "=", "feature")
    .where("import_sources.source_id", "=", sourceId)
    .executeTakeFirst();
}

async function featureIdOf(projectId: number, sourceId: string, source = "canny"): Promise<number> {
  const row = await ctx.db
    .selectFrom("import_sources")
    .select("target_id")
    .where("project_id", "=", projectId)
    .where("source", "=", source as "canny")
    .where("kind", "=", "feature")
    .where("source_id", "=", sourceId)
    .executeTakeFirstOrThrow();
  return row.target_id;
}

/** The voter of a source person: remembered when the import made it, else matched by SSO id or email. */
async function voterIdOf(projectId: number, sourceId: string): Promise<number> {
  const matched: Record<string, { sso_id: string }> = { "u-bob": { sso_id: "cust-bob" }, "u-cat": { sso_id: "cat-1" } };
  if (matched[sourceId]) {
    return (
      await ctx.db
        .selectFrom("voters")
        .select("id")
        .where("project_id", "=", projectId)
        .where("sso_id", "=", matched[sourceId].sso_id)
        .executeTakeFirstOrThrow()
    ).id;
  }
  const row = await ctx.db
    .selectFrom("import_sources")
    .select("target_id")
    .where("project_id", "=", projectId)
    .where("kind", "=", "voter")
    .where("source_id", "=", sourceId)
    .executeTakeFirstOrThrow();
  return row.target_id;
}

/** A Canny-like export touching every mapping rule. */
function richExport(): ImportData {
  const many = Array.from({ length: 10 }, (_, i) => person(`fan${i}`, { email: `fan${i}@example.com` }));
  return importData({
    people: [
      person("u-bob", { ssoId: "cust-bob", name: "Robert", email: "bob@example.com" }),
      person("u-cat", { name: "Catherine", email: "cat@EXAMPLE.com" }),
      person("u-nobody", { name: null, email: null }),
      person("u-gone", { name: "Gone", email: "gone@example.com", deleted: true }),
      person("u-admin", { name: "Admin", email: "admin@example.com", role: "editor", company: "Acme" }),
      person("u-mail", { name: null, email: "mailonly@example.com" }),
      ...many,
    ],
    boards: [{ sourceId: "b-feat", name: "Feature Requests", path: "boards.json[0]" }],
    tags: [
      { sourceId: "tag-ui", name: "ui", color: "#ff0000", path: "tags.json[0]" },
      { sourceId: "tag-api", name: "API", color: null, path: "tags.json[1]" },
    ],
    features: [
      feature("p-open", { status: "under review", boardSourceId: "b-feat", tagSourceIds: ["tag-ui", "tag-api"], authorSourceId: "u-cat" }),
      feature("p-planned", { status: "planned", boardSourceId: "b-feat", developerResponse: "Soon", targetDate: "2027-01-15" }),
      feature("p-progress", { status: "in progress", title: "x".repeat(300) }),
      feature("p-done", { status: "complete", createdAt: "2025-05-05T05:05:05Z" }),
      feature("p-closed", { status: "closed", responseIsDenial: true, developerResponse: "No" }),
      feature("p-weird", { status: "Someday maybe" }),
      feature("p-held", { approved: false }),
      // A chain: a -> b -> c, all three merged into c.
      feature("p-a", { mergedIntoSourceId: "p-b" }),
      feature("p-b", { mergedIntoSourceId: "p-c" }),
      feature("p-c"),
    ],
    votes: [
      vote("p-open", "u-bob", "2026-10-02T00:00:00Z"),
      vote("p-open", "u-bob", "2026-10-03T00:00:00Z"),
      vote("p-open", "u-cat"),
      vote("p-missing", "u-cat"),
      vote("p-open", "u-unknown"),
      ...many.map((m) => vote("p-planned", m.sourceId)),
      vote("p-a", "u-bob", "2026-09-01T00:00:00Z"),
      vote("p-a", "u-cat"),
      vote("p-b", "u-admin"),
      vote("p-c", "u-bob", "2026-10-10T00:00:00Z"),
    ],
    comments: [
      comment("k1", "p-open", "u-cat"),
      comment("k2", "p-open", "u-bob", { parentSourceId: "k1" }),
      comment("k3", "p-open", "u-admin", { parentSourceId: "k2" }),
      comment("k4", "p-missing", "u-bob"),
      comment("k5", "p-done", null),
    ],
    releases: [
      {
        sourceId: "e1",
        name: "Version 2",
        body: "## New\n\n- **dark** mode",
        publishedAt: "2026-11-01T00:00:00Z",
        scheduledFor: null,
        changelogType: "improvement",
        featureSourceIds: ["p-done", "p-missing"],
        path: "entries.json[0]",
      },
      {
        sourceId: "e2",
        name: "Version 2",
        body: "draft",
        publishedAt: null,
        scheduledFor: null,
        changelogType: null,
        featureSourceIds: [],
        path: "entries.json[1]",
      },
    ],
    subscriptions: [{ featureSourceId: "p-open", personSourceId: "u-bob", active: false, path: "post_subscribers[0]" }],
    warnings: [{ path: "comments.json[9]", message: "internal comment skipped" }],
    skipped: { comments: 1 },
  });
}

describe("writeImport: mapping", () => {
  it("maps every record of an export onto the roadmap with exact counts and counters", async () => {
    const p = await project();
    const progress: number[] = [];
    const result = await run(p.id, richExport(), ROADMAP, (done) => progress.push(done));

    expect(result.counts).toEqual({
      boards: { created: 0, updated: 0, skipped: 0 },
      // ui reused (case-insensitive) and the board's name made a tag.
      tags: { created: 2, updated: 1, skipped: 0 },
      voters: { created: 14, updated: 2, skipped: 0 },
      features: { created: 10, updated: 0, skipped: 0 },
      // bob's second vote, the unknown post and the unknown person.
      votes: { created: 16, updated: 0, skipped: 3 },
      comments: { created: 4, updated: 0, skipped: 2 },
      releases: { created: 2, updated: 0, skipped: 0 },
      merges: { created: 2, updated: 0, skipped: 0 },
      // 1 opt-out, 2 authors (none: only cat wrote p-open -> 1), votes and comments.
      subscriptions: expect.objectContaining({ created: expect.any(Number) }),
    });
    expect(result.warnings[0]).toEqual({ path: "comments.json[9]", message: "internal comment skipped" });
    expect(result.warningCount).toBe(result.warnings.length);
    const messages = result.warnings.map((w) => `${w.path}: ${w.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^posts.json\[p-progress\]: title cut to 254/),
        expect.stringMatching(/^posts.json\[p-weird\]: unknown status "Someday maybe"/),
        expect.stringMatching(/^votes.json\[p-missing\/u-cat\]: vote for unknown post/),
        expect.stringMatching(/^votes.json\[p-open\/u-unknown\]: vote by unknown person/),
        expect.stringMatching(/^comments.json\[k4\]: comment on unknown post/),
      ]),
    );

    // Voters: matched by SSO id and by email (case-insensitive), created otherwise.
    const voters = await ctx.db.selectFrom("voters").selectAll().where("project_id", "=", p.id).execute();
    const byId = new Map(voters.map((v) => [v.id, v]));
    expect(byId.get(await voterIdOf(p.id, "u-bob"))).toMatchObject({ sso_id: "cust-bob", display_name: "Bob" });
    // Matched voters are not remembered as made by the import (nor claimable).
    const madeVoters = await ctx.db
      .selectFrom("import_sources")
      .select("target_id")
      .where("project_id", "=", p.id)
      .where("kind", "=", "voter")
      .execute();
    expect(madeVoters.map((m) => m.target_id)).not.toContain(await voterIdOf(p.id, "u-bob"));
    expect(madeVoters.map((m) => m.target_id)).not.toContain(await voterIdOf(p.id, "u-cat"));
    expect(byId.get(await voterIdOf(p.id, "u-cat"))).toMatchObject({ sso_id: "cat-1", display_name: "Cat" });
    expect(byId.get(await voterIdOf(p.id, "u-nobody"))).toMatchObject({
      kind: "sso",
      sso_id: null,
      display_name: "Imported user",
      email: null,
    });
    expect(byId.get(await voterIdOf(p.id, "u-gone"))).toMatchObject({ display_name: "Imported user", email: null });
    expect(byId.get(await voterIdOf(p.id, "u-admin"))).toMatchObject({ role: "editor", company: "Acme", email: "admin@example.com" });
    expect(byId.get(await voterIdOf(p.id, "u-mail"))).toMatchObject({ display_name: "mailonly", email: "mailonly@example.com" });

    // Features: status by Canny's table, the roadmap column of that status (new ones added last).
    const columns = await ctx.db
      .selectFrom("columns")
      .innerJoin("boards", "boards.id", "columns.board_id")
      .select(["columns.name", "columns.status"])
      .where("boards.project_id", "=", p.id)
      .where("boards.kind", "=", "roadmap")
      .orderBy("columns.position")
      .execute();
    expect(columns).toEqual([
      { name: "Suggestions", status: "open" },
      { name: "Shipped", status: "done" },
      { name: "Planned", status: "planned" },
      { name: "In progress", status: "in_progress" },
      { name: "Denied", status: "denied" },
    ]);
    const open = await featureBySource(p.id, "p-open");
    expect(open).toMatchObject({ status: "open", column_name: "Suggestions", is_approved: true, description: "About p-open" });
    expect(open!.created_at.toISOString()).toBe("2026-10-01T10:00:00.000Z");
    expect(await featureBySource(p.id, "p-planned")).toMatchObject({
      status: "planned",
      column_name: "Planned",
      developer_response: "Soon",
    });
    expect((await featureBySource(p.id, "p-planned"))!.target_date!.toISOString()).toBe("2027-01-15T00:00:00.000Z");
    const progressFeature = await featureBySource(p.id, "p-progress");
    expect(progressFeature).toMatchObject({ status: "in_progress", column_name: "In progress" });
    expect(progressFeature!.heading).toHaveLength(254);
    expect(await featureBySource(p.id, "p-done")).toMatchObject({ status: "done", column_name: "Shipped" });
    expect(await featureBySource(p.id, "p-closed")).toMatchObject({ status: "denied", response_is_denial: true });
    expect(await featureBySource(p.id, "p-weird")).toMatchObject({ status: "open" });
    expect(await featureBySource(p.id, "p-held")).toMatchObject({ is_approved: false });
    // Search and similarity rows are filled as for any feature.
    const search = await ctx.db.selectFrom("feature_search").select("search_text").where("feature_id", "=", open!.id).executeTakeFirst();
    expect(search?.search_text).toContain("post p-open");

    // Tags: "ui" reused, "API" and the source board's name created.
    const tags = await ctx.db
      .selectFrom("feature_tags")
      .innerJoin("tags", "tags.id", "feature_tags.tag_id")
      .select("tags.name")
      .where("feature_tags.feature_id", "=", open!.id)
      .orderBy("tags.name")
      .execute();
    expect(tags.map((t) => t.name)).toEqual(["API", "Feature Requests", "UI"]);

    // Comments: a reply to a reply hangs under the top-level comment; no author: Imported user.
    const k1 = await ctx.db
      .selectFrom("import_sources")
      .select("target_id")
      .where("project_id", "=", p.id)
      .where("source_id", "=", "k1")
      .executeTakeFirstOrThrow();
    const thread = await ctx.db
      .selectFrom("comments")
      .select(["content", "parent_id", "like_count", "created_at"])
      .where("feature_id", "=", open!.id)
      .orderBy("id")
      .execute();
    expect(thread.map((c) => [c.content, c.parent_id])).toEqual([
      ["Comment k1", null],
      ["Comment k2", k1.target_id],
      ["Comment k3", k1.target_id],
    ]);
    expect(thread.every((c) => c.like_count === 0 && c.created_at.toISOString() === "2026-10-06T10:00:00.000Z")).toBe(true);
    const anonymous = await ctx.db
      .selectFrom("comments")
      .innerJoin("voters", "voters.id", "comments.voter_id")
      .select("voters.display_name")
      .where("comments.feature_id", "=", (await featureBySource(p.id, "p-done"))!.id)
      .executeTakeFirstOrThrow();
    expect(anonymous.display_name).toBe("Imported user");

    // Merge chain a -> b -> c: both into c, votes moved, bob's duplicate vote dropped (earlier one kept).
    const [a, b, c] = [await featureIdOf(p.id, "p-a"), await featureIdOf(p.id, "p-b"), await featureIdOf(p.id, "p-c")];
    const merges = await ctx.db
      .selectFrom("feature_merges")
      .select(["source_id", "target_id"])
      .where("project_id", "=", p.id)
      .orderBy("source_id")
      .execute();
    expect(merges).toEqual([
      { source_id: a, target_id: c },
      { source_id: b, target_id: c },
    ]);
    const cVotes = await ctx.db
      .selectFrom("votes")
      .select(["voter_id", "created_at"])
      .where("feature_id", "=", c)
      .orderBy("voter_id")
      .execute();
    expect(cVotes).toHaveLength(3);
    const bob = await voterIdOf(p.id, "u-bob");
    expect(cVotes.find((v) => v.voter_id === bob)!.created_at.toISOString()).toBe("2026-09-01T00:00:00.000Z");
    const archived = await ctx.db
      .selectFrom("features")
      .select(["id", "status", "linked_feature_id"])
      .where("id", "in", [a, b])
      .orderBy("id")
      .execute();
    expect(archived).toEqual([
      { id: a, status: "archived", linked_feature_id: c },
      { id: b, status: "archived", linked_feature_id: c },
    ]);

    // Releases: Markdown rendered, published kept, a draft without published_at, slugs unique.
    const releases = await ctx.db.selectFrom("releases").selectAll().where("project_id", "=", p.id).orderBy("id").execute();
    expect(releases.map((r) => [r.slug, r.published_at?.toISOString() ?? null, r.publication_recorded])).toEqual([
      ["version-2", "2026-11-01T00:00:00.000Z", true],
      ["version-2-2", null, false],
    ]);
    expect(releases[0]!.body_html).toContain("<strong>dark</strong>");
    const linked = await ctx.db.selectFrom("release_features").selectAll().where("release_id", "=", releases[0]!.id).execute();
    expect(linked).toEqual([expect.objectContaining({ feature_id: await featureIdOf(p.id, "p-done"), changelog_type: "improvement" })]);

    // Subscriptions: author, vote, comment; bob's opt-out on p-open kept (his vote does not undo it).
    const subs = await ctx.db
      .selectFrom("subscriptions")
      .select(["voter_id", "reason", "opted_out"])
      .where("feature_id", "=", open!.id)
      .orderBy("voter_id")
      .execute();
    const cat = await voterIdOf(p.id, "u-cat");
    const admin = await voterIdOf(p.id, "u-admin");
    expect(subs).toEqual(
      expect.arrayContaining([
        { voter_id: bob, reason: "manual", opted_out: true },
        { voter_id: cat, reason: "author", opted_out: false },
        { voter_id: admin, reason: "comment", opted_out: false },
      ]),
    );
    expect(subs).toHaveLength(3);
    // The merge moved a's and b's subscribers to c (reason merge).
    const onC = await ctx.db
      .selectFrom("subscriptions")
      .select(["voter_id", "reason"])
      .where("feature_id", "=", c)
      .orderBy("voter_id")
      .execute();
    expect(onC.map((s) => s.voter_id).sort()).toEqual([bob, cat, admin].sort());

    // Counters exact as if cast; p-planned's ten votes reached the 10 milestone, announced by no event.
    expect(await counterProblems(ctx.db, p.id)).toEqual([]);
    expect(await featureBySource(p.id, "p-planned")).toMatchObject({ vote_count: 10, weighted_score: 10, vote_milestone: 10 });
    expect(open).toMatchObject({ vote_count: 2, comment_count: 3 });
    const rows = await rowCounts(p.id);
    expect([rows.events, rows.notifications, rows.emails]).toEqual([0, 0, 0]);
    expect(progress.length).toBeGreaterThan(0);
  });

  it("a second run creates nothing, changes no row count and updates what the source changed", async () => {
    const p = await project();
    await run(p.id, richExport());
    const before = await rowCounts(p.id);
    const same = await run(p.id, richExport());
    for (const [kind, count] of Object.entries(same.counts)) expect([kind, count.created]).toEqual([kind, 0]);
    expect(same.counts.features).toEqual({ created: 0, updated: 10, skipped: 0 });
    expect(same.counts.voters).toEqual({ created: 0, updated: 16, skipped: 0 });
    expect(same.counts.votes).toEqual({ created: 0, updated: 0, skipped: 19 });
    expect(await rowCounts(p.id)).toEqual(before);

    const again = richExport();
    again.features[0] = { ...again.features[0]!, title: "Renamed", status: "planned", tagSourceIds: ["tag-api"] };
    again.comments[0] = { ...again.comments[0]!, content: "Edited" };
    again.people[4] = { ...again.people[4]!, name: "Admin Renamed" };
    const result = await run(p.id, again);
    for (const [kind, count] of Object.entries(result.counts)) expect([kind, count.created]).toEqual([kind, 0]);
    expect(result.counts.features).toEqual({ created: 0, updated: 10, skipped: 0 });
    expect(result.counts.voters).toEqual({ created: 0, updated: 16, skipped: 0 });
    // k4 (unknown post) and the one the reader dropped.
    expect(result.counts.comments).toEqual({ created: 0, updated: 4, skipped: 2 });
    const open = await featureBySource(p.id, "p-open");
    expect(open).toMatchObject({ heading: "Renamed", status: "planned", column_name: "Planned" });
    const tags = await ctx.db
      .selectFrom("feature_tags")
      .innerJoin("tags", "tags.id", "feature_tags.tag_id")
      .select("tags.name")
      .where("feature_id", "=", open!.id)
      .orderBy("tags.name")
      .execute();
    expect(tags.map((t) => t.name)).toEqual(["API", "Feature Requests"]);
    expect(
      (
        await ctx.db
          .selectFrom("comments")
          .select("content")
          .where(
            "id",
            "=",
            (
              await ctx.db
                .selectFrom("import_sources")
                .select("target_id")
                .where("project_id", "=", p.id)
                .where("source_id", "=", "k1")
                .executeTakeFirstOrThrow()
            ).target_id,
          )
          .executeTakeFirstOrThrow()
      ).content,
    ).toBe("Edited");
    expect(
      (
        await ctx.db
          .selectFrom("voters")
          .select("display_name")
          .where("id", "=", await voterIdOf(p.id, "u-admin"))
          .executeTakeFirstOrThrow()
      ).display_name,
    ).toBe("Admin Renamed");
    // A matched voter keeps its own name.
    expect(
      (
        await ctx.db
          .selectFrom("voters")
          .select("display_name")
          .where("id", "=", await voterIdOf(p.id, "u-bob"))
          .executeTakeFirstOrThrow()
      ).display_name,
    ).toBe("Bob");
    expect(await counterProblems(ctx.db, p.id)).toEqual([]);
  });

  it("does not bring back a feature deleted or a vote withdrawn since", async () => {
    const p = await project();
    await run(p.id, richExport());
    const closed = await featureIdOf(p.id, "p-closed");
    await ctx.db.deleteFrom("features").where("id", "=", closed).execute();
    const fan = await voterIdOf(p.id, "fan0");
    const planned = await featureIdOf(p.id, "p-planned");
    const { settings } = await ctx.db.selectFrom("projects").select("settings").where("id", "=", p.id).executeTakeFirstOrThrow();
    expect((await withdrawVote(ctx.db, settings, { projectId: p.id, featureId: planned, voterId: fan })).kind).toBe("changed");
    const withoutCounters = (counts: Record<string, number>) =>
      Object.fromEntries(Object.entries(counts).filter(([k]) => !k.startsWith("feature counters")));
    const before = withoutCounters(await rowCounts(p.id));
    const result = await run(p.id, richExport());
    expect(result.counts.features).toEqual({ created: 0, updated: 9, skipped: 1 });
    expect(result.warnings.map((w) => w.message)).toContain(
      "the feature an earlier import made of this post was deleted since; not re-created",
    );
    expect(
      await ctx.db.selectFrom("votes").select("voter_id").where("feature_id", "=", planned).where("voter_id", "=", fan).executeTakeFirst(),
    ).toBeUndefined();
    expect(withoutCounters(await rowCounts(p.id))).toEqual(before);
    // The counters of the feature the vote left are its rows' again.
    expect(await counterProblems(ctx.db, p.id)).toEqual([]);
  });

  it("a rolled-back run leaves every table unchanged, with the counts of a real run", async () => {
    const p = await project();
    const before = await rowCounts(p.id);
    const dry = await dryRun(p.id, richExport());
    expect(await rowCounts(p.id)).toEqual(before);
    const real = await run(p.id, richExport());
    expect(dry.counts).toEqual(real.counts);
    expect(dry.warnings).toEqual(real.warnings);
  });

  it("status_map wins over the source's table; without it an unknown status is open with a warning", async () => {
    const p = await project();
    const data = importData({
      source: "fider",
      features: [
        feature("1", { status: "Someday maybe" }),
        feature("2", { status: "started" }),
        feature("3", { status: "declined" }),
        feature("4", { status: "completed" }),
      ],
    });
    const mapped = await run(p.id, data, { boards: "roadmap", statusMap: { "Someday maybe": "planned", started: "done" } });
    expect(mapped.warnings).toEqual([]);
    const statuses = async (source: string) =>
      (
        await ctx.db
          .selectFrom("import_sources")
          .innerJoin("features", "features.id", "import_sources.target_id")
          .select(["import_sources.source_id", "features.status"])
          .where("import_sources.project_id", "=", p.id)
          .where("import_sources.source", "=", source as "fider")
          .where("kind", "=", "feature")
          .orderBy("import_sources.source_id")
          .execute()
      ).map((r) => r.status);
    expect(await statuses("fider")).toEqual(["planned", "done", "denied", "done"]);
    const q = await project();
    const plain = await run(q.id, data);
    expect(plain.warnings).toEqual([
      { path: "posts.json[1]", message: 'unknown status "Someday maybe": imported as open (status_map can name it)' },
    ]);
    const rows = await ctx.db.selectFrom("features").select("status").where("project_id", "=", q.id).orderBy("id").execute();
    expect(rows.map((r) => r.status)).toEqual(["open", "in_progress", "denied", "done"]);
  });

  it("boards custom: each source board becomes a custom board with one column Ideas", async () => {
    const p = await project();
    const data = importData({
      source: "csv",
      boards: [
        { sourceId: "Mobile", name: "Mobile", path: "features.csv:2" },
        { sourceId: "Web", name: "Web", path: "features.csv:3" },
      ],
      features: [
        feature("r1", { boardSourceId: "Mobile", status: "In progress" }),
        feature("r2", { boardSourceId: "Web", status: "Complete" }),
        feature("r3", { boardSourceId: "Mobile" }),
      ],
    });
    const result = await run(p.id, data, { boards: "custom", statusMap: {} });
    expect(result.counts.boards).toEqual({ created: 2, updated: 0, skipped: 0 });
    expect(result.counts.tags).toEqual({ created: 0, updated: 0, skipped: 0 });
    const rows = await ctx.db
      .selectFrom("features")
      .innerJoin("boards", "boards.id", "features.board_id")
      .innerJoin("columns", "columns.id", "features.column_id")
      .select(["features.heading", "boards.name as board", "boards.kind", "columns.name as column", "features.status"])
      .where("features.project_id", "=", p.id)
      .orderBy("features.id")
      .execute();
    expect(rows).toEqual([
      { heading: "Post r1", board: "Mobile", kind: "custom", column: "Ideas", status: "in_progress" },
      { heading: "Post r2", board: "Web", kind: "custom", column: "Ideas", status: "done" },
      { heading: "Post r3", board: "Mobile", kind: "custom", column: "Ideas", status: "open" },
    ]);
    const again = await run(p.id, data, { boards: "custom", statusMap: {} });
    expect(again.counts.boards).toEqual({ created: 0, updated: 2, skipped: 0 });
    expect(again.counts.features).toEqual({ created: 0, updated: 3, skipped: 0 });
  });

  it("breaks a merge cycle with a warning and merges the rest", async () => {
    const p = await project();
    const data = importData({
      features: [
        feature("x", { mergedIntoSourceId: "y" }),
        feature("y", { mergedIntoSourceId: "x" }),
        feature("z", { mergedIntoSourceId: "x" }),
      ],
    });
    const result = await run(p.id, data);
    expect(result.counts.merges).toEqual({ created: 2, updated: 0, skipped: 0 });
    expect(result.warnings.map((w) => w.message)).toEqual(['merge cycle (x -> y) broken: "x" stays an original']);
    const x = await featureIdOf(p.id, "x");
    const merges = await ctx.db.selectFrom("feature_merges").select("target_id").where("project_id", "=", p.id).execute();
    expect(merges.map((m) => m.target_id)).toEqual([x, x]);
  });
});

const SSO_SECRET = "sso-secret-for-import-claims-0123456789";

function ssoToken(sub: string, email: string | null): Promise<string> {
  return new SignJWT(email === null ? { name: "Signed In" } : { name: "Signed In", email })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(new TextEncoder().encode(SSO_SECRET));
}

describe("claiming imported voters by SSO email (imports-v3.md, Mapping, Voters)", () => {
  it("the first valid token with the voter's email takes it, votes included; a voter not made by an import is not claimable", async () => {
    const p = await project({ project: { sso_secret: SSO_SECRET } });
    await run(
      p.id,
      importData({
        people: [person("u-dana", { name: "Dana", email: "Dana@Example.com" })],
        features: [feature("f1")],
        votes: [vote("f1", "u-dana")],
      }),
    );
    const dana = await voterIdOf(p.id, "u-dana");
    const identity = await ctx.send("POST", `/api/v3/projects/${p.slug}/identity`, p.secretKey, undefined, {
      "X-VF-Token": await ssoToken("dana-sub", "dana@example.COM"),
    });
    expect(identity.status).toBe(200);
    const claimed = await ctx.db
      .selectFrom("voters")
      .select(["id", "sso_id", "vote_count"])
      .where("id", "=", dana)
      .executeTakeFirstOrThrow();
    expect(claimed).toEqual({ id: dana, sso_id: "dana-sub", vote_count: 1 });
    // Claimed once: another sub with the same email gets a voter of its own.
    const other = await ctx.send("POST", `/api/v3/projects/${p.slug}/identity`, p.secretKey, undefined, {
      "X-VF-Token": await ssoToken("dana-other", "dana@example.com"),
    });
    expect(other.status).toBe(201);
    // A project voter with an email that no import made (none here without sso_id): cat keeps hers.
    await ctx.db.updateTable("voters").set({ sso_id: null }).where("project_id", "=", p.id).where("sso_id", "=", "cat-1").execute();
    const cat = await ctx.send("POST", `/api/v3/projects/${p.slug}/identity`, p.secretKey, undefined, {
      "X-VF-Token": await ssoToken("cat-new", "cat@example.com"),
    });
    expect(cat.status).toBe(201);
  });

  it("two tokens claiming one voter at once: exactly one wins", async () => {
    const p = await project({ project: { sso_secret: SSO_SECRET } });
    await run(p.id, importData({ people: [person("u-eve", { email: "eve@example.com" })] }));
    const eve = await voterIdOf(p.id, "u-eve");
    const answers = await Promise.all(
      ["eve-a", "eve-b", "eve-c"].map(async (sub) =>
        ctx.send("POST", `/api/v3/projects/${p.slug}/identity`, p.secretKey, undefined, {
          "X-VF-Token": await ssoToken(sub, "EVE@example.com"),
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 201, 201]);
    const owner = await ctx.db.selectFrom("voters").select("sso_id").where("id", "=", eve).executeTakeFirstOrThrow();
    expect(["eve-a", "eve-b", "eve-c"]).toContain(owner.sso_id);
    const withEmail = await ctx.db
      .selectFrom("voters")
      .select("sso_id")
      .where("project_id", "=", p.id)
      .where(sql`lower(email)`, "=", "eve@example.com")
      .execute();
    expect(withEmail.map((v) => v.sso_id).sort()).toEqual(["eve-a", "eve-b", "eve-c"]);
  });
});

describe("snapshot round trip keeps import_source (project-snapshot.md)", () => {
  it("exports each imported record's source and id, and a restore into a new project keeps re-runs exact", async () => {
    const p = await project();
    await run(p.id, richExport());
    const doc = await exportSnapshot(ctx.db, p.slug);
    expect(doc.features.find((f) => f.import_source?.id === "p-open")?.import_source).toEqual({ source: "canny", id: "p-open" });
    expect(doc.tags.filter((t) => t.import_source !== null)).toHaveLength(3);
    expect(doc.voters.find((v) => v.import_source?.id === "u-admin")).toMatchObject({ email: "admin@example.com" });
    expect(doc.votes.filter((v) => v.import_source !== null).length).toBeGreaterThan(10);
    expect(doc.comments.find((c) => c.import_source?.id === "k1")?.content).toBe("Comment k1");
    expect(doc.releases.map((r) => r.import_source?.id)).toEqual(["e1", "e2"]);

    const copy = portableSnapshot(doc);
    const slug = `${p.slug}-copy`;
    await importSnapshot(
      ctx.db,
      { ...copy, project: { ...copy.project, slug }, keys: [{ kind: "secret", key: `sk_${slug}_0123456789abcdef` }] },
      {},
    );
    const restored = await projectIdOf(ctx.db, slug);
    const before = await rowCounts(restored);
    const again = await run(restored, richExport());
    for (const [kind, count] of Object.entries(again.counts)) expect([kind, count.created]).toEqual([kind, 0]);
    // Every record as it was; only a vote mapping two source votes onto one (bob voted on a
    // duplicate and its original; a snapshot vote names one source) is remembered anew.
    const { import_sources: mappingsAfter, ...after } = await rowCounts(restored);
    const { import_sources: mappingsBefore, ...rest } = before;
    expect(after).toEqual(rest);
    expect(mappingsAfter! - mappingsBefore!).toBe(1);
    const reexported = await exportSnapshot(ctx.db, slug);
    const sources = (d: typeof doc) =>
      [d.features, d.tags, d.voters, d.comments, d.releases, d.votes].map(
        (list) => list.map((r) => r.import_source).filter(Boolean).length,
      );
    expect(sources(reexported)).toEqual(sources(doc));
  });

  it("refuses two records of one kind naming the same source id", async () => {
    const error = await ctx
      .importProject({
        tags: [
          { ref: "a", name: "A", import_source: { source: "csv", id: "x" } },
          { ref: "b", name: "B", import_source: { source: "csv", id: "x" } },
        ],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SnapshotValidationError);
    expect((error as SnapshotValidationError).issues).toEqual([{ path: "tags[1].import_source", message: "already given by tags[0]" }]);
  });
});

describe("counters under live votes during an import (imports-v3.md, Mapping, Votes)", () => {
  it("a vote cast while the import's transaction is open is counted once, on top of the import's", async () => {
    const p = await project();
    await run(p.id, richExport());
    const { settings } = await ctx.db.selectFrom("projects").select("settings").where("id", "=", p.id).executeTakeFirstOrThrow();
    const open = await featureIdOf(p.id, "p-open");
    const done = await featureIdOf(p.id, "p-weird");
    const fan = await voterIdOf(p.id, "fan0");
    const other = await voterIdOf(p.id, "fan2");
    const more = richExport();
    more.votes.push(vote("p-open", "fan0"), vote("p-open", "fan1"));
    let live: Promise<unknown> | undefined;
    await ctx.db.transaction().execute(async (trx) => {
      await writeImport(trx, { projectId: p.id, source: "canny", data: more, options: ROADMAP, now: NOW });
      // The same voter on another feature, and another voter on a feature the import wrote to.
      live = Promise.all([
        castVote(ctx.db, settings, { projectId: p.id, featureId: done, voterId: fan }, NOW),
        castVote(ctx.db, settings, { projectId: p.id, featureId: open, voterId: other }, NOW),
      ]);
      let settled = false;
      void live.then(() => {
        settled = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Both wait for the import (its feature locks, or the one embedded connection).
      expect(settled).toBe(false);
    });
    expect(await live).toEqual([expect.objectContaining({ kind: "changed" }), expect.objectContaining({ kind: "changed" })]);
    expect(await counterProblems(ctx.db, p.id)).toEqual([]);
    const counts = await ctx.db.selectFrom("voters").select("vote_count").where("id", "=", fan).executeTakeFirstOrThrow();
    expect(counts.vote_count).toBe(3);
  });
});
