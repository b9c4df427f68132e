/**
 * Owner message routes (owner-api-v3.md, Routes /messages; AdminMessageObject; Rule 5): every
 * message past and future, the cross-field rules, and the public list's targeting of what the
 * owner writes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";
import { expectInvalid, idsOf, owner, publicRead } from "./support/owner-content.fixture.ts";

let ctx: TestContext;
let p: ImportedProject;
let other: ImportedProject;
const HOUR = 3_600_000;
const at = (hours: number) => new Date(Date.now() + hours * HOUR).toISOString();

beforeAll(async () => {
  ctx = await createTestContext();
  const snapshot = {
    voters: [{ ref: "ada", anon_token: `anon_${Math.random().toString(36).slice(2)}_ada_token_123` }],
    messages: [
      { ref: "old", title: "Old", body: "Ended", priority: 1, ends_at: at(-1) },
      { ref: "later", title: "Later", body: "Future", priority: 5, starts_at: at(24) },
      { ref: "live", title: "Live", body: "Now", priority: 3 },
    ],
    dismissals: [{ voter: "ada", message: "live" }],
  };
  p = await ctx.importProject(snapshot);
  other = await ctx.importProject({ messages: [{ ref: "theirs", title: "Theirs", body: "x" }] });
});
afterAll(async () => {
  await ctx.close();
});

type AdminMessage = Answer<"/api/v3/projects/{slug}/admin/messages", "get">["data"][number];
type Messages = Answer<"/api/v3/projects/{slug}/messages", "get">;

const publicTitles = async (query = "") => {
  const messages: Messages = await publicRead(ctx, p, `/messages${query}`);
  return messages.data.map((m) => m.title);
};

describe("GET /admin/messages", () => {
  it("lists every message, past and future, with targeting fields and dismissal counts", async () => {
    const list = await owner(ctx, p, "GET", "/messages");
    expect(list.status).toBe(200);
    expect(list.body.data.map((m: AdminMessage) => m.title)).toEqual(["Later", "Live", "Old"]);
    expect(list.body.meta.total).toBe(3);
    const live = list.body.data[1];
    expect(live).toMatchObject({
      id: idsOf(p).messages.live,
      platforms: null,
      min_app_version: null,
      max_app_version: null,
      dismissal_count: 1,
      kind: "info",
      presentation: "banner",
      is_dismissible: true,
    });
    expect(Object.keys(live).sort()).toEqual([
      "action_label",
      "action_url",
      "body",
      "created_at",
      "dismissal_count",
      "ends_at",
      "id",
      "is_dismissible",
      "kind",
      "max_app_version",
      "min_app_version",
      "platforms",
      "presentation",
      "priority",
      "starts_at",
      "title",
      "updated_at",
    ]);
    const one = await owner(ctx, p, "GET", `/messages/${idsOf(p).messages.old}`);
    expect(one.body.data.title).toBe("Old");
    expect((await owner(ctx, p, "GET", `/messages/${idsOf(other).messages.theirs}`)).status).toBe(404);
    const etag = one.headers.get("etag")!;
    expect((await owner(ctx, p, "GET", `/messages/${idsOf(p).messages.old}`, undefined, { "If-None-Match": etag })).status).toBe(304);
  });
});

describe("POST /admin/messages", () => {
  it("creates a targeted message that the public list sends exactly to its platforms and versions", async () => {
    const made = await owner(ctx, p, "POST", "/messages", {
      title: "iOS 2.x",
      body: "Try the widget",
      priority: 10,
      platforms: ["ios"],
      min_app_version: "2.0.0",
      max_app_version: "2.9.9",
      action_label: "Open",
      action_url: "https://example.com/widget",
      kind: "warning",
    });
    expect(made.status).toBe(201);
    expect(made.body.data).toMatchObject({
      title: "iOS 2.x",
      platforms: ["ios"],
      min_app_version: "2.0.0",
      max_app_version: "2.9.9",
      dismissal_count: 0,
      action_label: "Open",
      action_url: "https://example.com/widget",
      kind: "warning",
      starts_at: null,
      ends_at: null,
    });
    expect(await publicTitles("?platform=ios&app_version=2.0.0")).toEqual(["iOS 2.x", "Live"]);
    expect(await publicTitles("?platform=ios&app_version=2.9.9")).toEqual(["iOS 2.x", "Live"]);
    expect(await publicTitles("?platform=ios&app_version=3.0.0")).toEqual(["Live"]);
    expect(await publicTitles("?platform=web&app_version=2.5.0")).toEqual(["Live"]);
    expect(await publicTitles("?platform=ios")).toEqual(["Live"]);
  });

  it("enforces Rule 5 and the field shapes with 422 naming the field; nothing is created", async () => {
    const base = { title: "T", body: "B" };
    expectInvalid(await owner(ctx, p, "POST", "/messages", { ...base, action_label: "Go" }), "action_url");
    expectInvalid(await owner(ctx, p, "POST", "/messages", { ...base, min_app_version: "2.x" }), "min_app_version");
    expectInvalid(await owner(ctx, p, "POST", "/messages", { ...base, max_app_version: "1.0" }), "max_app_version");
    expectInvalid(
      await owner(ctx, p, "POST", "/messages", { ...base, min_app_version: "3.0.0", max_app_version: "2.0.0" }),
      "min_app_version",
    );
    expectInvalid(await owner(ctx, p, "POST", "/messages", { ...base, starts_at: at(2), ends_at: at(1) }), "ends_at");
    expectInvalid(await owner(ctx, p, "POST", "/messages", { ...base, ends_at: "tomorrow" }), "ends_at");
    expectInvalid(await owner(ctx, p, "POST", "/messages", { ...base, platforms: ["android"] }), "platforms[0]");
    expectInvalid(await owner(ctx, p, "POST", "/messages", { ...base, platforms: [] }), "platforms");
    expectInvalid(await owner(ctx, p, "POST", "/messages", { ...base, platforms: ["ios", "ios"] }), "platforms");
    expectInvalid(
      await owner(ctx, p, "POST", "/messages", { ...base, action_label: "x", action_url: "javascript:alert(1)" }),
      "action_url",
    );
    expectInvalid(await owner(ctx, p, "POST", "/messages", { ...base, kind: "fun" }), "kind");
    expectInvalid(await owner(ctx, p, "POST", "/messages", { ...base, priority: 1.5 }), "priority");
    expectInvalid(await owner(ctx, p, "POST", "/messages", { title: "T" }), "body");
    expectInvalid(await owner(ctx, p, "POST", "/messages", { ...base, dismissal_count: 3 }), "dismissal_count");
    expect((await owner(ctx, p, "GET", "/messages")).body.meta.total).toBe(4);
  });

  it("a replayed POST with one Idempotency-Key creates one message", async () => {
    const headers = { "Idempotency-Key": "msg-once" };
    const first = await owner(ctx, p, "POST", "/messages", { title: "Once", body: "B" }, headers);
    const again = await owner(ctx, p, "POST", "/messages", { title: "Once", body: "B" }, headers);
    expect(again.body).toEqual(first.body);
    const titles = (await owner(ctx, p, "GET", "/messages?per_page=100")).body.data.map((m: AdminMessage) => m.title);
    expect(titles.filter((t: string) => t === "Once")).toHaveLength(1);
  });
});

describe("PATCH and DELETE /admin/messages/{id}", () => {
  it("PATCH is partial; null clears; the rules are checked against the stored fields; public list follows", async () => {
    const later = idsOf(p).messages.later;
    expect(await publicTitles()).not.toContain("Later");
    const started = await owner(ctx, p, "PATCH", `/messages/${later}`, { starts_at: null, priority: 100 });
    expect(started.status).toBe(200);
    expect(started.body.data).toMatchObject({ title: "Later", body: "Future", starts_at: null, priority: 100 });
    expect((await publicTitles())[0]).toBe("Later");

    const withAction = await owner(ctx, p, "PATCH", `/messages/${later}`, { action_label: "Read", action_url: "https://example.com" });
    expect(withAction.body.data.action_label).toBe("Read");
    // Clearing the URL alone would leave a label without it.
    expectInvalid(await owner(ctx, p, "PATCH", `/messages/${later}`, { action_url: null }), "action_url");
    await owner(ctx, p, "PATCH", `/messages/${later}`, { min_app_version: "2.0.0" });
    expectInvalid(await owner(ctx, p, "PATCH", `/messages/${later}`, { max_app_version: "1.0.0" }), "min_app_version");
    await owner(ctx, p, "PATCH", `/messages/${later}`, { starts_at: at(-2) });
    expectInvalid(await owner(ctx, p, "PATCH", `/messages/${later}`, { ends_at: at(-3) }), "ends_at");
    expectInvalid(await owner(ctx, p, "PATCH", `/messages/${later}`, { title: null }), "title");
    expectInvalid(await owner(ctx, p, "PATCH", `/messages/${later}`, { created_at: at(0) }), "created_at");
    const stored = (await owner(ctx, p, "GET", `/messages/${later}`)).body.data;
    expect(stored).toMatchObject({
      action_url: "https://example.com",
      min_app_version: "2.0.0",
      max_app_version: null,
      ends_at: null,
      title: "Later",
    });
    // Now aimed at 2.0.0 and up: the public list without app_version leaves it out.
    expect(await publicTitles()).not.toContain("Later");
    expect(await publicTitles("?app_version=2.1")).toContain("Later");

    const ended = await owner(ctx, p, "PATCH", `/messages/${later}`, { ends_at: at(-1) });
    expect(ended.status).toBe(200);
    expect(await publicTitles("?app_version=2.1")).not.toContain("Later");
    expect((await owner(ctx, p, "PATCH", `/messages/${idsOf(other).messages.theirs}`, { title: "Mine" })).status).toBe(404);
  });

  it("DELETE removes the message and its dismissals; a second delete or another project's message is 404", async () => {
    const live = idsOf(p).messages.live;
    const gone = await owner(ctx, p, "DELETE", `/messages/${live}`);
    expect(gone.body).toEqual({ data: { deleted: true, id: live }, meta: null, error: null });
    expect(await publicTitles()).not.toContain("Live");
    const dismissals = await ctx.db.selectFrom("message_dismissals").select("voter_id").where("message_id", "=", live).execute();
    expect(dismissals).toEqual([]);
    expect((await owner(ctx, p, "DELETE", `/messages/${live}`)).status).toBe(404);
    expect((await owner(ctx, p, "DELETE", `/messages/${idsOf(other).messages.theirs}`)).status).toBe(404);
    expect((await owner(ctx, other, "GET", "/messages")).body.meta.total).toBe(1);
  });
});
