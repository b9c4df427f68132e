/**
 * Every change of the Events table records its event (owner-api-v3.md, "Events"), read back
 * through GET /events: the type, `data.object` (the object as the owner API shows it after the
 * change; as it was for deletions) and `changes`; no event for a change that changed nothing,
 * nor for tags, tiers, settings or an import.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importSnapshot } from "../src/admin/snapshot-import.ts";
import { publishDueReleaseEvents } from "../src/routes/changelog/changelog.publication.ts";
import {
  adminPath,
  allEvents,
  type EventsProject,
  expectStatus,
  featureId,
  importEventsProject,
  publicPath,
  voterId,
} from "./support/events.fixture.ts";
import { type Answer, buildSnapshot, createTestContext, type Schemas, type TestContext } from "./support/harness.ts";

type ListedEvent = Answer<"/api/v3/projects/{slug}/admin/events", "get">["data"][number];
type ListedComment = Answer<"/api/v3/projects/{slug}/admin/comments", "get">["data"][number];

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const as = (project: EventsProject, voter: string) => ({ "X-VF-Anon": project.tokens[voter]! });
const vote = (project: EventsProject, feature: string, voter: string, method: "POST" | "DELETE" = "POST") =>
  ctx.send(method, publicPath(project, `/features/${featureId(project, feature)}/vote`), project.secretKey, undefined, as(project, voter));
const adminGet = async (project: EventsProject, path: string) =>
  (await expectStatus(await ctx.get(adminPath(project, path), project.secretKey), 200)).data;
const adminSend = async (project: EventsProject, method: string, path: string, payload: unknown, status = 200) =>
  (await expectStatus(await ctx.send(method, adminPath(project, path), project.secretKey, payload), status)).data;
const types = (events: { type: string }[]) => events.map((event) => event.type);

describe("an import", () => {
  it("records no event", async () => {
    const project = await importEventsProject(ctx);
    expect(await allEvents(ctx, project)).toEqual([]);
  });
});

describe("vote.created / vote.deleted", () => {
  it("records each vote and withdrawal with {feature_id, voter_id, vote_count}, and nothing for a no-op", async () => {
    const project = await importEventsProject(ctx);
    const plain = featureId(project, "plain");
    expect((await vote(project, "plain", "ada")).status).toBe(200);
    expect((await vote(project, "plain", "ada")).status).toBe(409);
    expect((await vote(project, "plain", "bob")).status).toBe(200);
    expect((await vote(project, "plain", "ada", "DELETE")).status).toBe(200);
    expect((await vote(project, "plain", "ada", "DELETE")).status).toBe(409);
    expect((await vote(project, "pending", "ada")).status).toBe(404);
    const events = await allEvents(ctx, project, 3);
    expect(events.map((event) => [event.type, event.data])).toEqual([
      ["vote.created", { object: { feature_id: plain, voter_id: voterId(project, "ada"), vote_count: 1 }, changes: null }],
      ["vote.created", { object: { feature_id: plain, voter_id: voterId(project, "bob"), vote_count: 2 }, changes: null }],
      ["vote.deleted", { object: { feature_id: plain, voter_id: voterId(project, "ada"), vote_count: 1 }, changes: null }],
    ]);
    for (const event of events) {
      expect(event.id).toMatch(/^evt_[0-9a-z]{26}$/);
      expect(event.project).toBe(project.slug);
      expect(new Date(event.created_at).toISOString()).toBe(event.created_at);
    }
  });
});

describe("feature.vote_milestone", () => {
  it("is recorded once when vote_count reaches a threshold, however often it falls back and returns", async () => {
    const project = await importEventsProject(ctx);
    expect((await vote(project, "hot", "v8")).status).toBe(200); // 9
    const reached = await vote(project, "hot", "v9"); // 10
    expect(reached.status).toBe(200);
    expect((await reached.json()).data.vote_count).toBe(10);
    expect((await vote(project, "hot", "v9", "DELETE")).status).toBe(200); // 9
    expect((await vote(project, "hot", "v9")).status).toBe(200); // 10 again: no second milestone
    expect((await vote(project, "hot", "v9")).status).toBe(409);
    const events = await allEvents(ctx, project, 5);
    expect(types(events)).toEqual(["vote.created", "vote.created", "feature.vote_milestone", "vote.deleted", "vote.created"]);
    const milestone = events[2];
    expect(milestone.data.changes).toEqual({ vote_count: { from: 9, to: 10 } });
    // Built in SQL by the vote's statement: exactly what the owner API shows.
    const hot = await adminGet(project, `/features/${featureId(project, "hot")}`);
    expect(hot).toMatchObject({ vote_count: 10, release: { name: "0.9" }, linked_feature: { id: featureId(project, "plain") } });
    expect(hot.tags).toHaveLength(2);
    expect(milestone.data.object).toEqual(hot);
  });

  it("after a merge that carries the target past thresholds, announces the highest one once", async () => {
    const project = await importEventsProject(ctx);
    await adminSend(project, "POST", `/features/${featureId(project, "dup")}/merge`, { into_id: featureId(project, "hot") });
    const events = await allEvents(ctx, project, 3);
    expect(types(events)).toEqual(["feature.merged", "feature.status_changed", "feature.vote_milestone"]);
    expect(events[2].data.object.id).toBe(featureId(project, "hot"));
    expect(events[2].data.object.vote_count).toBe(24);
    expect(events[2].data.changes).toEqual({ vote_count: { from: 9, to: 10 } });
    // 25 is reached by the next vote: announced then, 10 never again.
    expect((await vote(project, "hot", "v8")).status).toBe(200);
    const after = await allEvents(ctx, project, 5);
    expect(types(after).slice(3)).toEqual(["vote.created", "feature.vote_milestone"]);
    expect(after[4].data.changes).toEqual({ vote_count: { from: 24, to: 25 } });
    expect(after[4].data.object).toEqual(await adminGet(project, `/features/${featureId(project, "hot")}`));
  });
});

describe("feature events", () => {
  it("feature.created for a suggestion and for an owner's feature, with the AdminFeatureObject", async () => {
    const project = await importEventsProject(ctx);
    const suggested = await expectStatus(
      await ctx.send(
        "POST",
        publicPath(project, "/features"),
        project.secretKey,
        { heading: "Idea", description: "Please" },
        as(project, "cy"),
      ),
      201,
    );
    const created = await adminSend(project, "POST", "/features", { heading: "Owner's", status: "planned" }, 201);
    const events = await allEvents(ctx, project, 2);
    expect(types(events)).toEqual(["feature.created", "feature.created"]);
    expect(events[0].data).toEqual({ object: await adminGet(project, `/features/${suggested.data.id}`), changes: null });
    expect(events[0].data.object).toMatchObject({ is_approved: false, author_voter_id: voterId(project, "cy") });
    expect(events[1].data).toEqual({ object: created, changes: null });
  });

  it("an owner edit records feature.updated with the changed fields, status_changed and approved", async () => {
    const project = await importEventsProject(ctx);
    const id = featureId(project, "pending");
    const before = await adminGet(project, `/features/${id}`);
    const after = await adminSend(project, "PATCH", `/features/${id}`, { is_approved: true, status: "in_progress", progress: 40 });
    const events = await allEvents(ctx, project, 3);
    expect(types(events)).toEqual(["feature.updated", "feature.status_changed", "feature.approved"]);
    for (const event of events) expect(event.data.object).toEqual(after);
    const columnOf = (feature: Schemas["AdminFeatureObject"]) => feature.column!.id;
    expect(events[0].data.changes).toEqual({
      status: { from: "open", to: "in_progress" },
      is_approved: { from: false, to: true },
      is_public: { from: false, to: true },
      progress: { from: null, to: 40 },
      column: { from: columnOf(before), to: columnOf(after) },
    });
    expect(events[1].data.changes).toEqual({ status: { from: "open", to: "in_progress" } });
    expect(events[2].data.changes).toEqual({ is_approved: { from: false, to: true } });

    // A heading edit: feature.updated alone; sending the same values again: nothing.
    await adminSend(project, "PATCH", `/features/${id}`, { heading: "Renamed", tag_ids: [] });
    await adminSend(project, "PATCH", `/features/${id}`, { heading: "Renamed", progress: 40 });
    const later = await allEvents(ctx, project, 4);
    expect(types(later)).toEqual(["feature.updated", "feature.status_changed", "feature.approved", "feature.updated"]);
    expect(later[3].data.changes).toEqual({ heading: { from: "Pending", to: "Renamed" } });
  });

  it("merge and unmerge record feature.merged / unmerged on the duplicate with changes.merged_into as ids", async () => {
    const project = await importEventsProject(ctx);
    const dup = featureId(project, "dup");
    const hot = featureId(project, "hot");
    await adminSend(project, "POST", `/features/${dup}/merge`, { into_id: hot });
    const merged = await adminGet(project, `/features/${dup}`);
    const restored = await adminSend(project, "POST", `/features/${dup}/unmerge`, undefined);
    const events = (await allEvents(ctx, project, 5)).filter((event) => event.type !== "feature.vote_milestone");
    expect(types(events)).toEqual(["feature.merged", "feature.status_changed", "feature.unmerged", "feature.status_changed"]);
    expect(events[0].data.object).toEqual(merged);
    expect(events[0].data.changes).toMatchObject({
      merged_into: { from: null, to: hot },
      linked_feature: { from: null, to: hot },
      status: { from: "planned", to: "archived" },
      vote_count: { from: 16, to: 0 },
    });
    expect(events[2].data.object).toEqual(restored);
    expect(events[2].data.changes).toMatchObject({ merged_into: { from: hot, to: null }, status: { from: "archived", to: "planned" } });
  });

  it("feature.deleted carries the feature as it was", async () => {
    const project = await importEventsProject(ctx);
    const id = featureId(project, "plain");
    const before = await adminGet(project, `/features/${id}`);
    await adminSend(project, "DELETE", `/features/${id}`, undefined);
    const events = await allEvents(ctx, project, 1);
    expect(events.map((event) => [event.type, event.data])).toEqual([["feature.deleted", { object: before, changes: null }]]);
    expect((await ctx.send("DELETE", adminPath(project, `/features/${id}`), project.secretKey)).status).toBe(404);
    expect(await allEvents(ctx, project)).toHaveLength(1);
  });
});

describe("comment events", () => {
  it("records comment.created and comment.deleted (for each reply too) from public and owner routes", async () => {
    const project = await importEventsProject(ctx);
    const plain = featureId(project, "plain");
    const written = await expectStatus(
      await ctx.send(
        "POST",
        publicPath(project, `/features/${plain}/comments`),
        project.secretKey,
        { content: "Hello" },
        as(project, "cy"),
      ),
      201,
    );
    const reply = await adminSend(
      project,
      "POST",
      `/features/${plain}/comments`,
      { content: "Team answer", parent_id: written.data.id, author_voter_id: voterId(project, "bob") },
      201,
    );
    const listed = await adminGet(project, `/comments?feature_id=${plain}`);
    const asListed = (id: number) => listed.find((comment: ListedComment) => comment.id === id);
    expect(reply.author_role).toBe("editor");
    // The author deletes the thread: the comment, then its reply.
    const deleted = await ctx.send(
      "DELETE",
      publicPath(project, `/comments/${written.data.id}`),
      project.secretKey,
      undefined,
      as(project, "cy"),
    );
    expect(deleted.status).toBe(200);
    const c1 = listed.find((comment: ListedComment) => comment.content === "First");
    await adminSend(project, "DELETE", `/comments/${c1.id}`, undefined);
    const events = await allEvents(ctx, project, 5);
    expect(events.map((event) => [event.type, event.data.object.id])).toEqual([
      ["comment.created", written.data.id],
      ["comment.created", reply.id],
      ["comment.deleted", written.data.id],
      ["comment.deleted", reply.id],
      ["comment.deleted", c1.id],
    ]);
    expect(events[0].data).toEqual({ object: asListed(written.data.id), changes: null });
    expect(events[0].data.object).toMatchObject({ is_own: false, has_liked: false, author_role: null, replies: [] });
    expect(events[1].data).toEqual({ object: asListed(reply.id), changes: null });
    expect(events[3].data.object).toEqual(asListed(reply.id));
    expect(events[4].data.object).toEqual(c1);
  });
});

describe("release.published", () => {
  it("is recorded when an owner publishes at once, and once when a scheduled time comes, whoever runs the task", async () => {
    const project = await importEventsProject(ctx);
    const now = await adminSend(
      project,
      "POST",
      "/releases",
      { name: "1.0", body: "Now", published_at: new Date(Date.now() - 1000).toISOString() },
      201,
    );
    const draft = await adminSend(project, "POST", "/releases", { name: "1.1", body: "Draft", published_at: null }, 201);
    const at = new Date(Date.now() + 3_600_000);
    const scheduled = await adminSend(project, "POST", "/releases", { name: "1.2", body: "Later", published_at: at.toISOString() }, 201);
    expect(types(await allEvents(ctx, project, 1))).toEqual(["release.published"]);
    expect((await allEvents(ctx, project))[0].data).toEqual({ object: now, changes: null });

    // Not yet due: nothing. Due: exactly one event however many runs race for it.
    await publishDueReleaseEvents(ctx.db, new Date(at.getTime() - 1000));
    const late = new Date(at.getTime() + 1000);
    const runs = await Promise.all([publishDueReleaseEvents(ctx.db, late), publishDueReleaseEvents(ctx.db, late)]);
    await publishDueReleaseEvents(ctx.db, late);
    expect(runs.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    const events = await allEvents(ctx, project, 2);
    expect(types(events)).toEqual(["release.published", "release.published"]);
    expect(events[1].data.object).toEqual({ ...scheduled, status: "published" });

    // Publishing the draft by PATCH records it; taking it back to draft and publishing again records it anew.
    await adminSend(project, "PATCH", `/releases/${draft.id}`, { published_at: new Date(Date.now() - 1000).toISOString() });
    await adminSend(project, "PATCH", `/releases/${draft.id}`, { name: "1.1 final" });
    await adminSend(project, "PATCH", `/releases/${draft.id}`, { published_at: null });
    await adminSend(project, "PATCH", `/releases/${draft.id}`, { published_at: new Date(Date.now() - 500).toISOString() });
    const all = await allEvents(ctx, project, 4);
    expect(all.map((event) => [event.type, event.data.object.id, event.data.object.status])).toEqual([
      ["release.published", now.id, "published"],
      ["release.published", scheduled.id, "published"],
      ["release.published", draft.id, "published"],
      ["release.published", draft.id, "published"],
    ]);
    expect(all[3].data.object.name).toBe("1.1 final");
  });
});

describe("voter events", () => {
  it("records banned, unbanned, billing_changed and deleted with the AdminVoterObject; other edits record nothing", async () => {
    const project = await importEventsProject(ctx);
    const ada = voterId(project, "ada");
    await adminSend(project, "PATCH", `/voters/${ada}`, { display_name: "Ada L." });
    const banned = await adminSend(project, "PATCH", `/voters/${ada}`, { banned: true });
    const unbanned = await adminSend(project, "PATCH", `/voters/${ada}`, { banned: false });
    const billed = await adminSend(project, "PATCH", `/voters/${ada}`, { tier_id: null, mrr_override_cents: 1200, churned: true });
    const before = await adminGet(project, `/voters/${ada}`);
    const events = await allEvents(ctx, project, 3);
    expect(types(events)).toEqual(["voter.banned", "voter.unbanned", "voter.billing_changed"]);
    expect(events[0].data).toEqual({ object: banned, changes: { banned: { from: false, to: true } } });
    expect(events[1].data).toEqual({ object: unbanned, changes: { banned: { from: true, to: false } } });
    expect(events[2].data.object).toEqual(billed);
    expect(events[2].data.changes).toEqual({
      tier: { from: project.ids.ids.tiers.pro, to: null },
      mrr_override_cents: { from: null, to: 1200 },
      mrr_cents: { from: 4900, to: 1200 },
      mrr_source: { from: "tier", to: "override" },
      churned: { from: false, to: true },
      churned_at: { from: null, to: billed.churned_at },
      churn_source: { from: null, to: "manual" },
    });
    await adminSend(project, "DELETE", `/voters/${ada}`, undefined);
    // The erasure nulls the personal fields of every event about the voter, and voter.deleted
    // carries the voter as it was with them null (owner-api-v3.md, Rules 3).
    const personal = [
      "display_name",
      "email",
      "company",
      "sso_id",
      "customer_id",
      "matched_on",
      "stripe_customer_id",
      "paddle_customer_id",
      "subscription_id",
    ];
    const scrubbed = (object: object) => ({ ...object, ...Object.fromEntries(personal.map((field) => [field, null])) });
    const erased = await allEvents(ctx, project, 4);
    expect(types(erased)).toEqual(["voter.banned", "voter.unbanned", "voter.billing_changed", "voter.deleted"]);
    expect(erased.slice(0, 3).map((event) => event.data)).toEqual(
      events.map((event) => ({ object: scrubbed(event.data.object), changes: event.data.changes })),
    );
    expect(erased[3].data).toEqual({ object: scrubbed(before), changes: null });
    expect(erased.every((event) => event.data.object.voter_id === ada)).toBe(true);
  });
});

describe("changes that record no event", () => {
  it("tags, tiers, settings and likes", async () => {
    const project = await importEventsProject(ctx);
    await adminSend(project, "POST", "/tags", { name: "Web" }, 201);
    await adminSend(project, "POST", "/tiers", { name: "Team", mrr_cents: 9900 }, 201);
    await adminSend(project, "PATCH", "/settings", { settings: { show_votes: false } });
    const c1 = (await adminGet(project, "/comments"))[0];
    expect(
      (await ctx.send("POST", publicPath(project, `/comments/${c1.id}/like`), project.secretKey, undefined, as(project, "cy"))).status,
    ).toBe(200);
    expect(await allEvents(ctx, project)).toEqual([]);
  });
});

describe("GET /events", () => {
  it("filters by repeated type, pages with after and page/per_page, oldest first", async () => {
    const project = await importEventsProject(ctx);
    for (const voter of ["v0", "v1", "v2"]) expect((await vote(project, "plain", voter)).status).toBe(200);
    expect((await vote(project, "plain", "v1", "DELETE")).status).toBe(200);
    await adminSend(project, "PATCH", `/features/${featureId(project, "plain")}`, { heading: "Plainer" });
    const all = await allEvents(ctx, project, 5);
    expect(types(all)).toEqual(["vote.created", "vote.created", "vote.created", "vote.deleted", "feature.updated"]);
    expect([...all.map((event) => event.id)].sort()).toEqual(all.map((event) => event.id));

    const filtered = await expectStatus(
      await ctx.get(adminPath(project, "/events?type=vote.deleted&type=feature.updated"), project.secretKey),
      200,
    );
    expect(types(filtered.data)).toEqual(["vote.deleted", "feature.updated"]);
    expect(filtered.meta).toEqual({ page: 1, per_page: 20, total: 2, total_pages: 1, has_more: false });

    const afterSecond = await expectStatus(
      await ctx.get(adminPath(project, `/events?after=${all[1].id}&per_page=2`), project.secretKey),
      200,
    );
    expect(afterSecond.data.map((event: ListedEvent) => event.id)).toEqual([all[2].id, all[3].id]);
    expect(afterSecond.meta).toEqual({ page: 1, per_page: 2, total: 3, total_pages: 2, has_more: true });
    const page2 = await expectStatus(
      await ctx.get(adminPath(project, `/events?after=${all[1].id}&per_page=2&page=2`), project.secretKey),
      200,
    );
    expect(page2.data.map((event: ListedEvent) => event.id)).toEqual([all[4].id]);
    const afterLast = await expectStatus(await ctx.get(adminPath(project, `/events?after=${all[4].id}`), project.secretKey), 200);
    expect(afterLast.data).toEqual([]);
  });

  it("answers 422 naming type or after for a bad value, 403 to the embed key, and lists only the project's events", async () => {
    const project = await importEventsProject(ctx);
    const other = await importEventsProject(ctx);
    expect((await vote(other, "plain", "ada")).status).toBe(200);
    await allEvents(ctx, other, 1);
    expect(await allEvents(ctx, project)).toEqual([]);
    const bad = async (query: string, field: string) => {
      const envelope = await expectStatus(await ctx.get(adminPath(project, `/events?${query}`), project.secretKey), 422);
      expect(envelope.error).toMatchObject({ code: "validation_failed", field });
    };
    await bad("type=vote.created&type=vote.exploded", "type");
    await bad("type=ping", "type");
    await bad("after=evt_123", "after");
    await bad(`after=evt_${"u".repeat(26)}`, "after");
    await bad("per_page=101", "per_page");
    const embed = await expectStatus(await ctx.get(adminPath(project, "/events"), project.embedKey), 403);
    expect(embed.error.code).toBe("not_allowed");
  });

  it("a replace import drops the project's events (a restore); a reader's cursor stays valid", async () => {
    const project = await importEventsProject(ctx);
    const other = await importEventsProject(ctx);
    expect((await vote(project, "plain", "ada")).status).toBe(200);
    expect((await vote(other, "plain", "ada")).status).toBe(200);
    const [seen] = await allEvents(ctx, project, 1);
    await allEvents(ctx, other, 1);
    const snapshot = buildSnapshot({ project: { slug: project.slug } });
    snapshot.keys = [
      { kind: "secret", key: project.secretKey },
      { kind: "embed", key: project.embedKey },
    ];
    snapshot.features = [{ ref: "again", board: "roadmap", column: "c-planned", heading: "Again" }];
    const ids = await importSnapshot(ctx.db, snapshot, { replace: true });
    expect(await allEvents(ctx, project)).toEqual([]);
    expect(await allEvents(ctx, other, 1)).toHaveLength(1);
    await adminSend(project, "PATCH", `/features/${ids.ids.features.again}`, { heading: "Again and again" });
    expect(types(await allEvents(ctx, project, 1, `after=${seen.id}`))).toEqual(["feature.updated"]);
  });
});
