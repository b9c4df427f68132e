/**
 * The notification consumer (engagement-api-v3.md, "Notifications (in-app inbox)": the table of
 * types, the actor rule, one per type for a change that is several, back and forth gives two;
 * "Subscriptions" rule 4: banned voters get nothing; at most one per event, type and voter
 * whatever the retries; "Snapshot and erasure" with owner-api-v3.md Rules 3: an erasure leaves no
 * notification quoting the voter). Changes go through the API, subscriptions are written in SQL,
 * and the consumer is run in process until it passed the project's last event.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../db/connect.ts";
import {
  consumeNotificationBatch,
  consumePendingNotifications,
  deleteExpiredNotifications,
  excerptOf,
} from "../src/events/notification-consumer.ts";
import { body, createTestContext, type Json, type TestContext } from "./support/harness.ts";
import { inOtherSession, waitForLockWaiter } from "./support/lock-waiter.ts";
import {
  drainNotifications,
  importNotifyProject,
  type NotifyProject,
  notificationsOf,
  ownerWrite,
  publicPath,
  recipients,
  subscribe,
  voterWrite,
} from "./support/notifications.fixture.ts";

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

/** A project where ada and bob follow f1, cy follows it opted out, ban (banned) follows it; dan does not. */
async function followedProject(): Promise<NotifyProject> {
  const project = await importNotifyProject(ctx);
  const { ada, bob, cy, ban } = project.voters;
  await subscribe(ctx.db, project, project.features.f1!, [ada, bob, ban]);
  await subscribe(ctx.db, project, project.features.f1!, [cy], { optedOut: true });
  return project;
}

async function settled(project: NotifyProject) {
  await drainNotifications(ctx.db, project.id);
  return notificationsOf(ctx.db, project.id);
}

describe("status_changed", () => {
  it("goes to the subscribers of a public feature, not to opted-out, banned or unsubscribed voters", async () => {
    const project = await followedProject();
    await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f1}`, { status: "in_progress" });
    const rows = await settled(project);
    expect(recipients(project, rows, "status_changed")).toEqual(["ada", "bob"]);
    expect(rows.every((row) => row.feature_id === project.features.f1)).toBe(true);
    expect(rows[0]!.data).toEqual({ from: "planned", to: "in_progress" });
    expect(rows).toHaveLength(2);
  });

  it("counts a feature public before or after the change, and skips one public neither before nor after", async () => {
    const project = await importNotifyProject(ctx);
    const { ada } = project.voters;
    for (const ref of ["f2", "hidden"]) await subscribe(ctx.db, project, project.features[ref]!, [ada]);
    // Public before (planned), not after (denied is hidden on this board).
    await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f2}`, { status: "denied" });
    // Not public before (denied), public after (planned).
    await ownerWrite(ctx, project, "PATCH", `/features/${project.features.hidden}`, { status: "planned" });
    let rows = await settled(project);
    expect(rows.map((row) => [row.feature_id, row.data])).toEqual([
      [project.features.f2, { from: "planned", to: "denied" }],
      [project.features.hidden, { from: "denied", to: "planned" }],
    ]);
    // Denied -> archived: hidden before and after (show_denied and show_archived are false).
    await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f2}`, { status: "archived" });
    rows = await settled(project);
    expect(rows).toHaveLength(2);
  });

  it("a status changed back and forth gives two notifications", async () => {
    const project = await followedProject();
    await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f1}`, { status: "in_progress" });
    await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f1}`, { status: "planned" });
    const rows = (await settled(project)).filter((row) => row.voter_id === project.voters.ada);
    expect(rows.map((row) => row.data)).toEqual([
      { from: "planned", to: "in_progress" },
      { from: "in_progress", to: "planned" },
    ]);
  });

  it("a status change with a response gives one notification per type", async () => {
    const project = await followedProject();
    await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f1}`, {
      status: "done",
      developer_response: "Shipped in 2.0",
    });
    const rows = (await settled(project)).filter((row) => row.voter_id === project.voters.ada);
    expect(rows.map((row) => row.type).sort()).toEqual(["responded", "status_changed"]);
    expect(rows.find((row) => row.type === "responded")!.data).toEqual({ developer_response: "Shipped in 2.0", response_is_denial: false });
  });
});

describe("responded", () => {
  it("a response notifies; response_is_denial alone and a cleared response notify nobody", async () => {
    const project = await followedProject();
    const f1 = project.features.f1;
    await ownerWrite(ctx, project, "PATCH", `/features/${f1}`, { developer_response: "Not now", response_is_denial: true });
    let rows = await settled(project);
    expect(recipients(project, rows, "responded")).toEqual(["ada", "bob"]);
    expect(rows[0]!.data).toEqual({ developer_response: "Not now", response_is_denial: true });
    await ownerWrite(ctx, project, "PATCH", `/features/${f1}`, { response_is_denial: false });
    await ownerWrite(ctx, project, "PATCH", `/features/${f1}`, { developer_response: null });
    rows = await settled(project);
    expect(rows).toHaveLength(2);
    await ownerWrite(ctx, project, "PATCH", `/features/${f1}`, { developer_response: "Changed our mind" });
    rows = await settled(project);
    expect(rows).toHaveLength(4);
  });
});

describe("merged", () => {
  it("tells the duplicate's subscribers where it went, with no status_changed for the move to archived", async () => {
    const project = await importNotifyProject(ctx);
    const { ada, bob, dan } = project.voters;
    await subscribe(ctx.db, project, project.features.dup!, [ada, bob]);
    await subscribe(ctx.db, project, project.features.f1!, [dan]);
    await ownerWrite(ctx, project, "POST", `/features/${project.features.dup}/merge`, { into_id: project.features.f1 });
    const rows = await settled(project);
    expect(rows.map((row) => row.type)).toEqual(["merged", "merged"]);
    expect(recipients(project, rows, "merged")).toEqual(["ada", "bob"]);
    expect(rows[0]).toMatchObject({ feature_id: project.features.dup, data: { into: { id: project.features.f1, heading: "First" } } });
  });

  it("an unmerge's status change back is a status change like any other", async () => {
    const project = await importNotifyProject(ctx);
    await subscribe(ctx.db, project, project.features.dup!, [project.voters.ada]);
    await ownerWrite(ctx, project, "POST", `/features/${project.features.dup}/merge`, { into_id: project.features.f1 });
    await ownerWrite(ctx, project, "POST", `/features/${project.features.dup}/unmerge`);
    const rows = await settled(project);
    expect(rows.map((row) => [row.type, row.data])).toEqual([
      ["merged", { into: { id: project.features.f1, heading: "First" } }],
      ["status_changed", { from: "archived", to: "planned" }],
    ]);
  });
});

describe("shipped", () => {
  it("each listed feature's subscribers, once per voter and release; a feature added to a public release notifies nobody", async () => {
    const project = await importNotifyProject(ctx);
    const { ada, bob, cy, ban } = project.voters;
    const { f1, f2, f3 } = project.features as Record<string, number>;
    await subscribe(ctx.db, project, f1!, [ada, bob, ban]);
    await subscribe(ctx.db, project, f2!, [ada, cy]);
    await subscribe(ctx.db, project, f3!, [project.voters.dan]);
    const draft = await ownerWrite(ctx, project, "POST", "/releases", {
      name: "2.0",
      body: "Big one",
      published_at: null,
      features: [
        { feature_id: f1, changelog_type: "new" },
        { feature_id: f2, changelog_type: "fix" },
      ],
    });
    expect(await settled(project)).toHaveLength(0);
    await ownerWrite(ctx, project, "PATCH", `/releases/${draft.data.id}`, { published_at: new Date().toISOString() });
    let rows = await settled(project);
    expect(recipients(project, rows, "shipped")).toEqual(["ada", "bob", "cy"]);
    expect(rows.every((row) => JSON.stringify(row.data) === JSON.stringify({ release: { id: draft.data.id, name: "2.0" } }))).toBe(true);
    // ada follows both: one notification, on the first listed feature.
    expect(rows.find((row) => row.voter_id === ada)!.feature_id).toBe(f1);
    expect(rows.find((row) => row.voter_id === cy)!.feature_id).toBe(f2);
    await ownerWrite(ctx, project, "PATCH", `/releases/${draft.data.id}`, {
      features: [
        { feature_id: f1, changelog_type: "new" },
        { feature_id: f2, changelog_type: "fix" },
        { feature_id: f3, changelog_type: "improvement" },
      ],
    });
    rows = await settled(project);
    expect(rows).toHaveLength(3);
  });
});

describe("replied and team_commented", () => {
  it("a reply reaches the parent's author (subscribed or not), never the replier", async () => {
    const project = await importNotifyProject(ctx);
    const { bob, cy } = project.voters;
    const c1 = project.ids.ids.comments.c1 as number;
    await subscribe(ctx.db, project, project.features.f1!, [bob, cy]);
    const reply = await voterWrite(ctx, project, "bob", "POST", `/features/${project.features.f1}/comments`, {
      content: "Agreed",
      parent_id: c1,
    });
    const rows = await settled(project);
    expect(rows).toHaveLength(1);
    expect(recipients(project, rows, "replied")).toEqual(["ada"]);
    expect(rows[0]!.data).toEqual({ comment_id: reply.data.id, parent_id: c1, author_name: "Bob", excerpt: "Agreed" });
  });

  it("no replied for replying to oneself, for a parent author who opted out of the feature or is banned", async () => {
    const project = await importNotifyProject(ctx);
    const f1 = project.features.f1!;
    const c1 = project.ids.ids.comments.c1 as number;
    await voterWrite(ctx, project, "ada", "POST", `/features/${f1}/comments`, { content: "Myself", parent_id: c1 });
    expect(await settled(project)).toHaveLength(0);
    await subscribe(ctx.db, project, f1, [project.voters.ada], { optedOut: true });
    await voterWrite(ctx, project, "bob", "POST", `/features/${f1}/comments`, { content: "Hi", parent_id: c1 });
    expect(await settled(project)).toHaveLength(0);
    const top = await voterWrite(ctx, project, "dan", "POST", `/features/${f1}/comments`, { content: "Top" });
    await ctx.db.updateTable("voters").set({ banned: true }).where("id", "=", project.voters.dan).execute();
    await voterWrite(ctx, project, "bob", "POST", `/features/${f1}/comments`, { content: "Hi dan", parent_id: top.data.id });
    expect(await settled(project)).toHaveLength(0);
  });

  it("a voter's top-level comment notifies nobody", async () => {
    const project = await followedProject();
    await voterWrite(ctx, project, "dan", "POST", `/features/${project.features.f1}/comments`, { content: "Me too" });
    expect(await settled(project)).toHaveLength(0);
  });

  it("an editor's comment notifies the subscribers but not the editor", async () => {
    const project = await followedProject();
    await subscribe(ctx.db, project, project.features.f1!, [project.voters.ed]);
    const comment = await voterWrite(ctx, project, "ed", "POST", `/features/${project.features.f1}/comments`, { content: "On it" });
    const rows = await settled(project);
    expect(recipients(project, rows, "team_commented")).toEqual(["ada", "bob"]);
    expect(rows[0]!.data).toEqual({ comment_id: comment.data.id, author_name: "Ed", excerpt: "On it" });
  });

  it("an owner comment excludes its author_voter_id; a team reply gives the parent's author replied only", async () => {
    const project = await followedProject();
    const { ada, olga } = project.voters;
    const f1 = project.features.f1!;
    await subscribe(ctx.db, project, f1, [olga]);
    const olgaId = project.ids.ids.voters.olga as string;
    await ownerWrite(ctx, project, "POST", `/features/${f1}/comments`, { content: "Thanks all", author_voter_id: olgaId });
    let rows = await settled(project);
    expect(recipients(project, rows, "team_commented")).toEqual(["ada", "bob"]);
    await ownerWrite(ctx, project, "POST", `/features/${f1}/comments`, {
      content: "Ada, see the beta",
      author_voter_id: olgaId,
      parent_id: project.ids.ids.comments.c1,
    });
    rows = (await settled(project)).slice(2);
    expect(rows.map((row) => [row.type, row.voter_id]).sort()).toEqual(
      [
        ["replied", ada],
        ["team_commented", project.voters.bob],
      ].sort(),
    );
    expect(rows.find((row) => row.type === "replied")!.data).toMatchObject({ author_name: "Olga", excerpt: "Ada, see the beta" });
  });

  it("excerpt keeps the first 280 code points, a surrogate pair counting as one", async () => {
    expect(excerptOf("a".repeat(300))).toBe("a".repeat(280));
    const project = await importNotifyProject(ctx);
    const content = "😀".repeat(290);
    await voterWrite(ctx, project, "bob", "POST", `/features/${project.features.f1}/comments`, {
      content,
      parent_id: project.ids.ids.comments.c1,
    });
    const rows = await settled(project);
    expect(rows[0]!.data.excerpt).toBe("😀".repeat(280));
    expect(rows[0]!.data.excerpt.length).toBe(560);
  });

  it("a comment deleted before it is consumed notifies nobody", async () => {
    const project = await importNotifyProject(ctx);
    // Consumed up to here, so the reply below is still pending when it is deleted.
    await drainNotifications(ctx.db, project.id);
    const reply = await voterWrite(ctx, project, "bob", "POST", `/features/${project.features.f1}/comments`, {
      content: "Oops",
      parent_id: project.ids.ids.comments.c1,
    });
    await voterWrite(ctx, project, "bob", "DELETE", `/comments/${reply.data.id}`);
    expect(await settled(project)).toHaveLength(0);
  });
});

describe("rule 4 and replays", () => {
  it("a voter banned when the change is processed gets nothing, and nothing later once unbanned", async () => {
    const project = await followedProject();
    await drainNotifications(ctx.db, project.id);
    await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f1}`, { status: "in_progress" });
    await ctx.db.updateTable("voters").set({ banned: true }).where("id", "=", project.voters.bob).execute();
    let rows = await settled(project);
    expect(recipients(project, rows, "status_changed")).toEqual(["ada"]);
    await ctx.db.updateTable("voters").set({ banned: false }).where("id", "in", [project.voters.bob, project.voters.ban]).execute();
    rows = await settled(project);
    expect(recipients(project, rows, "status_changed")).toEqual(["ada"]);
  });

  it("replaying consumed events, and two consumers at once, add no duplicate", async () => {
    const project = await followedProject();
    const many = await importNotifyProject(ctx);
    await drainNotifications(ctx.db, project.id);
    const { rows: start } = await sql<{ txid: string; seq: string }>`SELECT txid::text, seq::text FROM notification_cursor`.execute(ctx.db);
    await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f1}`, { status: "in_progress", developer_response: "Yes" });
    await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f1}`, { status: "planned" });
    const before = await settled(project);
    expect(before).toHaveLength(6);
    // Back to where it stood: every event is consumed again.
    await sql`UPDATE notification_cursor SET txid = ${start[0]!.txid}::xid8, seq = ${start[0]!.seq}::bigint`.execute(ctx.db);
    expect(await settled(project)).toEqual(before);

    // Two consumers at once, on two connections when the database has them.
    const voters = await ctx.db
      .insertInto("voters")
      .values(
        Array.from({ length: 300 }, (_, i) => ({
          public_id: `ntf-${many.slug}-${i}`,
          project_id: many.id,
          kind: "anonymous" as const,
          display_name: `Follower ${i}`,
        })),
      )
      .returning("id")
      .execute();
    await subscribe(
      ctx.db,
      many,
      many.features.f2!,
      voters.map((row) => row.id),
    );
    await drainNotifications(ctx.db, many.id);
    const url = ctx.deps.config.DATABASE_URL;
    const other = url ? await openDatabase({ DATABASE_URL: url, poolSize: 2 }) : undefined;
    try {
      for (let round = 0; round < 3; round++) {
        await ownerWrite(ctx, many, "PATCH", `/features/${many.features.f2}`, { status: round % 2 === 0 ? "in_progress" : "planned" });
      }
      const small = { batchSize: 1, rowBudget: 1 };
      const results = await Promise.all([
        consumePendingNotifications(ctx.db, 50, small),
        consumePendingNotifications(other?.db ?? ctx.db, 50, small),
        consumeNotificationBatch(ctx.db),
      ]);
      expect(results.some((result) => result.ran)).toBe(true);
      const rows = await settled(many);
      expect(rows).toHaveLength(900);
      const perVoterAndEvent = new Set(rows.map((row) => `${row.voter_id}/${row.event_seq}`));
      expect(perVoterAndEvent.size).toBe(900);
      expect(new Set(rows.map((row) => row.event_seq)).size).toBe(3);
    } finally {
      await other?.close();
    }
  });

  it("notifications older than 90 days are deleted, younger ones stay", async () => {
    const project = await followedProject();
    await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f1}`, { status: "in_progress" });
    await ownerWrite(ctx, project, "PATCH", `/features/${project.features.f1}`, { status: "planned" });
    const rows = await settled(project);
    expect(rows).toHaveLength(4);
    const now = new Date();
    await ctx.db
      .updateTable("notifications")
      .set({ created_at: new Date(now.getTime() - 91 * 86_400_000) })
      .where("project_id", "=", project.id)
      .where("event_seq", "=", rows[0]!.event_seq)
      .execute();
    expect(await deleteExpiredNotifications(ctx.db, now, 90, 1)).toBeGreaterThanOrEqual(2);
    expect((await notificationsOf(ctx.db, project.id)).map((row) => row.data)).toEqual([
      { from: "in_progress", to: "planned" },
      { from: "in_progress", to: "planned" },
    ]);
  });
});

describe("erasure of a comment's author (Snapshot and erasure; owner-api-v3.md, Rules 3)", () => {
  it("nulls author_name and excerpt of every notification quoting the voter's comments; the rest stays", async () => {
    const project = await followedProject();
    const { ada, dan } = project.voters;
    const f1 = project.features.f1!;
    const c1 = project.ids.ids.comments.c1 as number;
    await subscribe(ctx.db, project, f1, [dan]);
    const tag = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const secret = { bob: `Bob secret reply ${tag}`, ed: `Ed secret note ${tag}`, olga: `Olga secret reply ${tag}` };
    // replied (bob to ada), team_commented (editor ed), both from an owner comment made as olga.
    const bobReply = await voterWrite(ctx, project, "bob", "POST", `/features/${f1}/comments`, { content: secret.bob, parent_id: c1 });
    const edNote = await voterWrite(ctx, project, "ed", "POST", `/features/${f1}/comments`, { content: secret.ed });
    const olgaReply = await ownerWrite(ctx, project, "POST", `/features/${f1}/comments`, {
      content: secret.olga,
      author_voter_id: project.ids.ids.voters.olga,
      parent_id: c1,
    });
    // Kept: a reply by a voter not erased, and a status change.
    const cyReply = await voterWrite(ctx, project, "cy", "POST", `/features/${f1}/comments`, { content: `Cy keeps ${tag}`, parent_id: c1 });
    await ownerWrite(ctx, project, "PATCH", `/features/${f1}`, { status: "in_progress" });
    const before = (await settled(project)).filter((row) => row.voter_id === ada || row.voter_id === dan);
    expect(JSON.stringify(before)).toContain(secret.bob);

    for (const ref of ["bob", "ed", "olga"] as const) {
      await ownerWrite(ctx, project, "DELETE", `/voters/${project.ids.ids.voters[ref]}`);
    }
    const rows = await notificationsOf(ctx.db, project.id);
    // Nothing quotes them, in the table or the inbox; every notification of ada and dan stays.
    const leaks = (value: unknown) =>
      [...Object.values(secret), "Bob", "Ed", "Olga"].filter((text) => JSON.stringify(value).includes(`"${text}`));
    expect(leaks(rows)).toEqual([]);
    expect(rows.map((row) => [row.voter_id, row.type, row.event_seq])).toEqual(
      before.map((row) => [row.voter_id, row.type, row.event_seq]),
    );
    const quoted = (commentId: unknown) =>
      rows.filter((row) => row.data.comment_id === commentId).map((row) => [row.voter_id, row.type, row.data]);
    expect(quoted(bobReply.data.id)).toEqual([
      [ada, "replied", { comment_id: bobReply.data.id, parent_id: c1, author_name: null, excerpt: null }],
    ]);
    expect(quoted(edNote.data.id).sort()).toEqual(
      [
        [ada, "team_commented", { comment_id: edNote.data.id, author_name: null, excerpt: null }],
        [dan, "team_commented", { comment_id: edNote.data.id, author_name: null, excerpt: null }],
      ].sort(),
    );
    expect(quoted(olgaReply.data.id).sort()).toEqual(
      [
        [ada, "replied", { comment_id: olgaReply.data.id, parent_id: c1, author_name: null, excerpt: null }],
        [dan, "team_commented", { comment_id: olgaReply.data.id, author_name: null, excerpt: null }],
      ].sort(),
    );
    expect(quoted(cyReply.data.id)).toEqual([
      [ada, "replied", { comment_id: cyReply.data.id, parent_id: c1, author_name: "Cy", excerpt: `Cy keeps ${tag}` }],
    ]);
    expect(rows.filter((row) => row.type === "status_changed").map((row) => row.data)).toEqual([
      { from: "planned", to: "in_progress" },
      { from: "planned", to: "in_progress" },
    ]);
    for (const voter of ["ada", "dan"] as const) {
      const inbox = await ctx.get(publicPath(project, "/notifications?per_page=100"), project.embedKey, {
        "X-VF-Anon": project.tokens[voter],
      });
      expect(inbox.status).toBe(200);
      const listed = (await body<{ data: Json[] }>(inbox)).data;
      expect(listed).toHaveLength(rows.filter((row) => row.voter_id === project.voters[voter]).length);
      expect(leaks(listed)).toEqual([]);
    }
  });

  it.skipIf(!process.env.DATABASE_URL)(
    "a consumer reading a reply whose deletion is not yet committed waits for it, then notifies nobody",
    async () => {
      const project = await importNotifyProject(ctx);
      await drainNotifications(ctx.db, project.id);
      const reply = await voterWrite(ctx, project, "bob", "POST", `/features/${project.features.f1}/comments`, {
        content: "Gone soon",
        parent_id: project.ids.ids.comments.c1,
      });
      await inOtherSession(async (other) => {
        // Standing for an erasure: the comment deleted, not yet committed.
        await other`BEGIN`;
        await other`DELETE FROM comments WHERE id = ${reply.data.id}`;
        const consumed = drainNotifications(ctx.db, project.id);
        await waitForLockWaiter(other, "select", "the consumer");
        await other`COMMIT`;
        await consumed;
      });
      expect(await notificationsOf(ctx.db, project.id)).toEqual([]);
    },
  );
});
