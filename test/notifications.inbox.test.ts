/**
 * The inbox routes (engagement-api-v3.md, "Notifications (in-app inbox)" and "Common rules"):
 * identity required, newest first with meta and the unread filter, the unread count, marking
 * read by ids or all (422 naming ids, other voters' and malformed ids ignored, `updated` exact
 * under concurrent calls, Idempotency-Key), one voter never seeing or changing another's rows,
 * and a notification listed while its feature exists whatever its visibility.
 */
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, body, createTestContext, type ErrorAnswer, type TestContext } from "./support/harness.ts";
import {
  drainNotifications,
  importNotifyProject,
  type NotifyProject,
  ownerWrite,
  publicPath,
  subscribe,
  type VoterRef,
} from "./support/notifications.fixture.ts";

type ListAnswer = Answer<"/api/v3/projects/{slug}/notifications", "get">;
type CountAnswer = Answer<"/api/v3/projects/{slug}/notifications/unread-count", "get">;
type ReadAnswer = Answer<"/api/v3/projects/{slug}/notifications/read", "post">;

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

const as = (project: NotifyProject, voter: VoterRef) => ({ "X-VF-Anon": project.tokens[voter] });

async function list(project: NotifyProject, voter: VoterRef, query = ""): Promise<ListAnswer> {
  const response = await ctx.get(publicPath(project, `/notifications${query}`), project.embedKey, as(project, voter));
  expect(response.status).toBe(200);
  return body<ListAnswer>(response);
}

async function unreadCount(project: NotifyProject, voter: VoterRef): Promise<number> {
  const response = await ctx.get(publicPath(project, "/notifications/unread-count"), project.embedKey, as(project, voter));
  expect(response.status).toBe(200);
  return (await body<CountAnswer>(response)).data.unread_count;
}

function markRead(project: NotifyProject, voter: VoterRef, payload: unknown, headers: Record<string, string> = {}) {
  return ctx.send("POST", publicPath(project, "/notifications/read"), project.embedKey, payload, { ...as(project, voter), ...headers });
}

/** ada and bob follow f1 and f2; four status changes give each of them four notifications. */
async function inboxProject(): Promise<NotifyProject> {
  const project = await importNotifyProject(ctx);
  const { ada, bob } = project.voters;
  for (const ref of ["f1", "f2"]) await subscribe(ctx.db, project, project.features[ref]!, [ada, bob]);
  await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f1}`, { status: "in_progress" });
  await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f2}`, { status: "in_progress" });
  await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f1}`, { status: "done" });
  await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f2}`, { developer_response: "Soon" });
  await drainNotifications(ctx.db, project.id);
  return project;
}

describe("identity", () => {
  it("every inbox route needs a voter identity: 401 identity_required without, identity_invalid with a bad one", async () => {
    const project = await importNotifyProject(ctx);
    for (const [method, path, payload] of [
      ["GET", "/notifications", undefined],
      ["GET", "/notifications/unread-count", undefined],
      ["POST", "/notifications/read", { all: true }],
    ] as const) {
      const none = await ctx.send(method, publicPath(project, path), project.embedKey, payload);
      expect(none.status).toBe(401);
      expect((await body<ErrorAnswer>(none)).error.code).toBe("identity_required");
      const bad = await ctx.send(method, publicPath(project, path), project.embedKey, payload, { "X-VF-Anon": "anon_unknown_token" });
      expect(bad.status).toBe(401);
      expect((await body<ErrorAnswer>(bad)).error.code).toBe("identity_invalid");
    }
  });
});

describe("an SSO user with no voter yet", () => {
  it("reads an empty inbox and a zero count; marking all read answers 0", async () => {
    const secret = "notify-sso-secret-0123456789abcdef";
    const project = await ctx.importProject({ project: { sso_secret: secret } });
    const token = await new SignJWT({ sub: "never-seen", name: "New" })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime(Math.floor(Date.now() / 1000) + 600)
      .sign(new TextEncoder().encode(secret));
    const headers = { "X-VF-Token": token };
    const listed = await ctx.get(`/api/v3/projects/${project.slug}/notifications`, project.embedKey, headers);
    expect(listed.status).toBe(200);
    expect((await body<ListAnswer>(listed)).data).toEqual([]);
    const count = await ctx.get(`/api/v3/projects/${project.slug}/notifications/unread-count`, project.embedKey, headers);
    expect((await body<CountAnswer>(count)).data).toEqual({ unread_count: 0 });
    const read = await ctx.send("POST", `/api/v3/projects/${project.slug}/notifications/read`, project.embedKey, { all: true }, headers);
    expect((await body<ReadAnswer>(read)).data).toEqual({ updated: 0 });
  });
});

describe("GET /notifications and unread-count", () => {
  it("lists the voter's notifications newest first with meta, the feature as it is now, and the unread filter", async () => {
    const project = await inboxProject();
    const response = await ctx.get(publicPath(project, "/notifications"), project.embedKey, as(project, "ada"));
    expect(response.headers.get("Cache-Control")).toBe("private, max-age=0");
    expect(response.headers.get("ETag")).toBeTruthy();
    expect(response.headers.get("X-RateLimit-Limit")).toBeTruthy();
    const all = await body<ListAnswer>(response);
    expect(all.meta).toEqual({ page: 1, per_page: 20, total: 4, total_pages: 1, has_more: false });
    expect(all.data.map((n) => n.type)).toEqual(["responded", "status_changed", "status_changed", "status_changed"]);
    expect(all.data.map((n) => n.feature.id)).toEqual([project.features.f2, project.features.f1, project.features.f2, project.features.f1]);
    const newest = all.data[0]!;
    expect(newest.id).toMatch(/^ntf_[0-9]+$/);
    expect(newest.read).toBe(false);
    expect(newest.data).toEqual({ developer_response: "Soon", response_is_denial: false });
    expect(Number.isNaN(Date.parse(newest.created_at))).toBe(false);
    expect(all.data[1]!.data).toEqual({ from: "in_progress", to: "done" });

    // The feature as it is now.
    await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f2}`, { heading: "Second, renamed" });
    const renamed = await list(project, "ada");
    expect(renamed.data[0]!.feature).toEqual({ id: project.features.f2, heading: "Second, renamed" });

    const paged = await list(project, "ada", "?per_page=3&page=2");
    expect(paged.meta).toEqual({ page: 2, per_page: 3, total: 4, total_pages: 2, has_more: false });
    expect(paged.data.map((n) => n.id)).toEqual([all.data[3]!.id]);

    expect(await unreadCount(project, "ada")).toBe(4);
    const read = await markRead(project, "ada", { ids: [all.data[1]!.id, all.data[3]!.id] });
    expect((await body<ReadAnswer>(read)).data).toEqual({ updated: 2 });
    expect(await unreadCount(project, "ada")).toBe(2);
    expect((await list(project, "ada", "?unread=true")).data.map((n) => n.id)).toEqual([all.data[0]!.id, all.data[2]!.id]);
    const readOnly = await list(project, "ada", "?unread=false");
    expect(readOnly.data.map((n) => [n.id, n.read])).toEqual([
      [all.data[1]!.id, true],
      [all.data[3]!.id, true],
    ]);
    expect(readOnly.meta.total).toBe(2);
    const badFilter = await ctx.get(publicPath(project, "/notifications?unread=yes"), project.embedKey, as(project, "ada"));
    expect(badFilter.status).toBe(422);
    expect((await body<ErrorAnswer>(badFilter)).error.field).toBe("unread");
  });

  it("a voter with no notifications gets an empty page and a zero count", async () => {
    const project = await inboxProject();
    const empty = await list(project, "dan");
    expect(empty.data).toEqual([]);
    expect(empty.meta.total).toBe(0);
    expect(await unreadCount(project, "dan")).toBe(0);
  });

  it("stays listed whatever the feature's visibility, and goes with the feature's deletion", async () => {
    const project = await inboxProject();
    // f1 is done; archiving it hides it from the public board (show_archived is false).
    await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f1}`, { status: "archived" });
    await drainNotifications(ctx.db, project.id);
    expect((await list(project, "ada")).data.filter((n) => n.feature.id === project.features.f1)).toHaveLength(3);
    await ownerWrite(ctx, project, "DELETE", `/features/${project.features.f1}`);
    const after = await list(project, "ada");
    expect(after.data.map((n) => n.feature.id)).toEqual([project.features.f2, project.features.f2]);
    expect(await unreadCount(project, "ada")).toBe(2);
  });
});

describe("POST /notifications/read", () => {
  it("refuses both, neither, zero or more than 100 ids with 422 naming ids, and changes nothing", async () => {
    const project = await inboxProject();
    const ids = (await list(project, "ada")).data.map((n) => n.id);
    const tooMany = Array.from({ length: 101 }, (_, i) => `ntf_${i + 1}`);
    for (const payload of [{ ids, all: true }, {}, { ids: [] }, { ids: tooMany }, { all: false }]) {
      const response = await markRead(project, "ada", payload);
      const envelope = await body<ErrorAnswer>(response);
      expect(response.status, JSON.stringify(payload)).toBe(422);
      expect(envelope.error).toMatchObject({ code: "validation_failed", field: "ids" });
    }
    expect(await unreadCount(project, "ada")).toBe(4);
    const hundred = await markRead(project, "ada", { ids: [...ids, ...tooMany.slice(0, 100 - ids.length)] });
    expect((await body<ReadAnswer>(hundred)).data).toEqual({ updated: 4 });
  });

  it("ignores ids that are not the voter's own unread notifications; one voter never changes another's", async () => {
    const project = await inboxProject();
    const adas = (await list(project, "ada")).data.map((n) => n.id);
    const bobs = (await list(project, "bob")).data.map((n) => n.id);
    expect(adas.filter((id) => bobs.includes(id))).toEqual([]);
    await markRead(project, "ada", { ids: [adas[0]] });
    const response = await markRead(project, "ada", {
      ids: [adas[0], adas[1], bobs[0], bobs[1], "ntf_0", "ntf_x", "42", "ntf_99999999999999999999", ""],
    });
    expect(response.status).toBe(200);
    expect((await body<ReadAnswer>(response)).data).toEqual({ updated: 1 });
    expect(await unreadCount(project, "bob")).toBe(4);
    expect((await list(project, "bob", "?unread=false")).data).toEqual([]);
    // {all: true} is the voter's own only, too.
    expect((await body<ReadAnswer>(await markRead(project, "bob", { all: true }))).data).toEqual({ updated: 4 });
    expect(await unreadCount(project, "ada")).toBe(2);
    expect((await body<ReadAnswer>(await markRead(project, "bob", { all: true }))).data).toEqual({ updated: 0 });
  });

  it("counts each unread-to-read transition once under concurrent calls", async () => {
    const project = await inboxProject();
    const ids = (await list(project, "ada")).data.map((n) => n.id);
    const answers = await Promise.all([
      markRead(project, "ada", { all: true }),
      markRead(project, "ada", { ids }),
      markRead(project, "ada", { ids: ids.slice(0, 2) }),
      markRead(project, "ada", { all: true }),
    ]);
    const updated = await Promise.all(answers.map(async (response) => (await body<ReadAnswer>(response)).data.updated));
    expect(updated.reduce((sum, n) => sum + n, 0)).toBe(4);
    expect(await unreadCount(project, "ada")).toBe(0);
  });

  it("replays a request with the same Idempotency-Key without changing anything", async () => {
    const project = await inboxProject();
    const ids = (await list(project, "ada")).data.map((n) => n.id);
    const first = await markRead(project, "ada", { ids: ids.slice(0, 1) }, { "Idempotency-Key": "read-1" });
    expect((await body<ReadAnswer>(first)).data).toEqual({ updated: 1 });
    const again = await markRead(project, "ada", { ids: ids.slice(0, 1) }, { "Idempotency-Key": "read-1" });
    expect(again.headers.get("Idempotent-Replay")).toBe("true");
    expect((await body<ReadAnswer>(again)).data).toEqual({ updated: 1 });
    expect(await unreadCount(project, "ada")).toBe(3);
  });
});

describe("erasure", () => {
  it("erasing a voter removes their notifications and no one else's", async () => {
    const project = await inboxProject();
    const count = async (voterId: number) =>
      (
        await ctx.db
          .selectFrom("notifications")
          .select(ctx.db.fn.countAll<number>().as("n"))
          .where("voter_id", "=", voterId)
          .executeTakeFirstOrThrow()
      ).n;
    expect(Number(await count(project.voters.ada))).toBe(4);
    await ownerWrite(ctx, project, "DELETE", `/voters/${project.ids.ids.voters.ada}`);
    expect(Number(await count(project.voters.ada))).toBe(0);
    expect(await unreadCount(project, "bob")).toBe(4);
  });
});
