/**
 * The Atom feeds' documents (engagement-api-v3.md, "Feeds"): every field of the feed head and of
 * the entries, order, the 50-entry limit, which releases and status changes are listed, and board
 * texts escaped as XML requires. Parsed by a real XML parser (test/support/feeds.fixture.ts).
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AtomFeed, htmlText, readFeed } from "./support/feeds.fixture.ts";
import { type Answer, body, createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";

type Release = Answer<"/api/v3/projects/{slug}/changelog/{id}", "get">;
type Events = Answer<"/api/v3/projects/{slug}/admin/events", "get">;

const HOUR = 3_600_000;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/** What PUBLIC_BASE_URL defaults to in tests (http://{HOST}:{PORT}). */
const BASE = "http://127.0.0.1:8080";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

const feedPath = (p: ImportedProject, kind: "changelog" | "roadmap") => `/api/v3/projects/${p.slug}/${kind}.atom`;

async function feedOf(p: ImportedProject, kind: "changelog" | "roadmap"): Promise<AtomFeed> {
  return readFeed(await ctx.app.request(`${feedPath(p, kind)}?key=${encodeURIComponent(p.embedKey)}`));
}

async function patchFeature(p: ImportedProject, ref: string, patch: Record<string, unknown>): Promise<void> {
  const response = await ctx.send("PATCH", `/api/v3/projects/${p.slug}/admin/features/${p.ids.ids.features[ref]}`, p.secretKey, patch);
  expect(response.status).toBe(200);
}

/** The project's feature.status_changed event ids, newest first, through GET /admin/events. */
async function statusChangeIds(p: ImportedProject): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const answer = await body<Events>(
      await ctx.get(`/api/v3/projects/${p.slug}/admin/events?type=feature.status_changed&per_page=100&page=${page}`, p.secretKey),
    );
    ids.push(...answer.data.map((event) => event.id));
    if (!answer.meta.has_more) break;
  }
  return ids.reverse();
}

async function projectCreatedAt(slug: string): Promise<string> {
  const row = await ctx.db.selectFrom("projects").select("created_at").where("slug", "=", slug).executeTakeFirstOrThrow();
  return row.created_at.toISOString();
}

describe("changelog.atom", () => {
  let p: ImportedProject;
  const now = Date.now();
  // 55 published releases an hour apart (r0 newest), plus a draft and a scheduled one newer than all.
  const published = Array.from({ length: 55 }, (_, i) => ({
    ref: `r${i}`,
    name: `Release ${i}`,
    slug: `release-${i}`,
    body: i % 2 === 0 ? `## Notes ${i}\n\n[x](javascript:alert(1)) [ok](https://ok.example)\n\n<script>alert(${i})</script>` : null,
    is_featured: i === 54,
    published_at: new Date(now - (i + 1) * HOUR).toISOString(),
    features: [],
  }));

  beforeAll(async () => {
    p = await ctx.importProject({
      project: { name: "Lumen" },
      releases: [
        ...published,
        { ref: "draft", name: "Draft", slug: "draft", body: "Soon", published_at: null, features: [] },
        { ref: "later", name: "Later", slug: "later", body: "Scheduled", published_at: new Date(now + HOUR).toISOString(), features: [] },
      ],
    });
  });

  it("lists the 50 most recent public releases newest first, without drafts or scheduled ones", async () => {
    const feed = await feedOf(p, "changelog");
    const releaseIds = p.ids.ids.releases as Record<string, number>;
    expect(feed.entries).toHaveLength(50);
    // The featured r54 is the oldest: a feed is in time order, featured or not.
    expect(feed.entries.map((entry) => entry.id)).toEqual(
      Array.from({ length: 50 }, (_, i) => `urn:feedback-board:${p.slug}:release:${releaseIds[`r${i}`]}`),
    );
    const titles = feed.entries.map((entry) => entry.title);
    expect(titles).not.toContain("Draft");
    expect(titles).not.toContain("Later");
  });

  it("gives each entry its release's name, published_at, sanitized body_html and link", async () => {
    const feed = await feedOf(p, "changelog");
    const releaseIds = p.ids.ids.releases as Record<string, number>;
    for (const [index, entry] of feed.entries.slice(0, 4).entries()) {
      const id = releaseIds[`r${index}`]!;
      const { data } = await body<Release>(await ctx.get(`/api/v3/projects/${p.slug}/changelog/${id}`, p.secretKey));
      expect(entry.titleType).toBe("html");
      expect(htmlText(entry.title)).toBe(data.name);
      expect(entry.updated).toBe(data.published_at);
      expect(entry.published).toBe(data.published_at);
      // No changelog_url: no link at all (the API's own address needs a key a reader lacks).
      expect(entry.links).toEqual([]);
      if (data.body_html === null) {
        // Neither a note nor a link: the name is the content (an Atom entry needs one of them).
        expect(entry.contentType).toBe("html");
        expect(htmlText(entry.content ?? "")).toBe(data.name);
      } else {
        expect(entry.contentType).toBe("html");
        expect(entry.content).toBe(data.body_html);
        expect(entry.content).not.toContain("<script");
        expect(entry.content).not.toMatch(/href="javascript:/i);
        expect(entry.content).toContain('href="https://ok.example"');
      }
    }
  });

  it("links each release to the owner's changelog_url with its slug put in, and refuses a changelog_url without {release_slug}", async () => {
    const q = await ctx.importProject({
      releases: [
        { ref: "noted", name: "Noted", slug: "2-0 beta", body: "Notes", published_at: new Date(now - HOUR).toISOString(), features: [] },
        { ref: "bare", name: "Bare", slug: "1-9", body: null, published_at: new Date(now - 2 * HOUR).toISOString(), features: [] },
      ],
    });
    for (const bad of ["https://lumen.example/changelog", "ftp://lumen.example/{release_slug}", "{release_slug}"]) {
      const refused = await ctx.send("PATCH", `/api/v3/projects/${q.slug}/admin/settings`, q.secretKey, {
        notifications: { changelog_url: bad },
      });
      expect(refused.status, bad).toBe(422);
      expect((await body<{ error: { field: string } }>(refused)).error.field).toBe("notifications.changelog_url");
    }
    const patched = await ctx.send("PATCH", `/api/v3/projects/${q.slug}/admin/settings`, q.secretKey, {
      notifications: { changelog_url: "https://lumen.example/changelog/{release_slug}?ref=feed" },
    });
    expect(patched.status).toBe(200);
    const feed = await feedOf(q, "changelog");
    expect(feed.entries.map((entry) => entry.links)).toEqual([
      [{ rel: null, href: "https://lumen.example/changelog/2-0%20beta?ref=feed" }],
      [{ rel: null, href: "https://lumen.example/changelog/1-9?ref=feed" }],
    ]);
    // With a link, a release without a note has no content.
    expect(feed.entries[1]!.content).toBeNull();
  });

  it("has a stable id, a title, an author, a self link and the newest entry's time as updated", async () => {
    const feed = await feedOf(p, "changelog");
    expect(feed.id).toBe(`urn:feedback-board:${p.slug}:changelog`);
    expect(feed.title).toBe("Lumen changelog");
    expect(feed.authorName).toBe("Lumen");
    expect(feed.links).toEqual([{ rel: "self", href: `${BASE}/api/v3/projects/${p.slug}/changelog.atom` }]);
    expect(feed.updated).toBe(published[0]!.published_at);
    expect(feed.updated).toMatch(ISO);
    // Same id on the next read.
    expect((await feedOf(p, "changelog")).entries[0]!.id).toBe(feed.entries[0]!.id);
  });

  it("is empty with the project's created_at as updated when nothing is public", async () => {
    const q = await ctx.importProject({
      releases: [{ ref: "draft", name: "Draft", slug: "draft", body: "Soon", published_at: null, features: [] }],
    });
    const feed = await feedOf(q, "changelog");
    expect(feed.entries).toEqual([]);
    expect(feed.updated).toBe(await projectCreatedAt(q.slug));
  });
});

describe("roadmap.atom", () => {
  it("lists status changes of features public before or after, newest first, with heading and new status", async () => {
    const p = await ctx.importProject({
      project: { name: "Board", settings: { show_denied: false, show_archived: false } },
      voters: [{ ref: "cy", kind: "anonymous", display_name: "Cy" }],
      features: [
        { ref: "pub", board: "roadmap", column: "c-planned", heading: "Public one" },
        { ref: "to-denied", board: "roadmap", column: "c-planned", heading: "Public then denied" },
        { ref: "hidden", board: "roadmap", column: "c-denied", heading: "Denied and hidden" },
        { ref: "back", board: "roadmap", column: "c-denied", heading: "Denied then planned" },
        { ref: "pending", board: "roadmap", column: "c-open", heading: "Awaiting review", is_approved: false, author: "cy" },
        { ref: "gone", board: "roadmap", column: "c-planned", heading: "Deleted later" },
      ],
    });
    await patchFeature(p, "pub", { status: "in_progress" }); // public before and after
    await patchFeature(p, "to-denied", { status: "denied" }); // public before only
    await patchFeature(p, "hidden", { status: "archived" }); // hidden before and after (show_* false)
    await patchFeature(p, "back", { status: "planned" }); // public after only
    await patchFeature(p, "pending", { status: "denied" }); // unapproved suggestion, then hidden
    await patchFeature(p, "gone", { status: "done" });
    const deleted = await ctx.send("DELETE", `/api/v3/projects/${p.slug}/admin/features/${p.ids.ids.features.gone}`, p.secretKey);
    expect(deleted.status).toBe(200);

    const events = await statusChangeIds(p);
    expect(events).toHaveLength(6);
    const feed = await feedOf(p, "roadmap");
    // Newest first: back (events[2]), to-denied (events[4]), pub (events[5]); the others are left out.
    expect(feed.entries.map((entry) => entry.id)).toEqual(
      [events[2], events[4], events[5]].map((id) => `urn:feedback-board:${p.slug}:event:${id}`),
    );
    expect(feed.entries.map((entry) => htmlText(entry.title))).toEqual([
      "Denied then planned: planned",
      "Public then denied: denied",
      "Public one: in_progress",
    ]);
    expect(feed.entries.map((entry) => entry.titleType)).toEqual(["html", "html", "html"]);
    expect(htmlText(feed.entries[1]!.content ?? "")).toBe("Status changed from planned to denied");
    expect(feed.entries[1]!.contentType).toBe("html");
    // No board_url: no link element rather than the API's feature route (401 missing_key for a reader).
    expect(feed.entries.map((entry) => entry.links)).toEqual([[], [], []]);

    // updated is the event's time, as GET /admin/events reports it.
    const listed = await body<Events>(await ctx.get(`/api/v3/projects/${p.slug}/admin/events?type=feature.status_changed`, p.secretKey));
    const times = new Map(listed.data.map((event) => [event.id, event.created_at]));
    expect(feed.entries.map((entry) => entry.updated)).toEqual([events[2], events[4], events[5]].map((id) => times.get(id!)));
    expect(feed.updated).toBe(feed.entries[0]!.updated);
    expect(feed.id).toBe(`urn:feedback-board:${p.slug}:roadmap`);
    expect(feed.title).toBe("Board roadmap");
    expect(feed.authorName).toBe("Board");
    expect(feed.links).toEqual([{ rel: "self", href: `${BASE}/api/v3/projects/${p.slug}/roadmap.atom` }]);
  });

  it("keeps the 50 most recent of many status changes", async () => {
    const p = await ctx.importProject({ features: [{ ref: "flip", board: "roadmap", column: "c-planned", heading: "Flip" }] });
    for (let i = 0; i < 53; i++) await patchFeature(p, "flip", { status: i % 2 === 0 ? "in_progress" : "planned" });
    const events = await statusChangeIds(p);
    expect(events).toHaveLength(53);
    const feed = await feedOf(p, "roadmap");
    expect(feed.entries.map((entry) => entry.id)).toEqual(events.slice(0, 50).map((id) => `urn:feedback-board:${p.slug}:event:${id}`));
    // The 53rd change (i = 52) went to in_progress and is the newest.
    expect(htmlText(feed.entries[0]!.title)).toBe("Flip: in_progress");
    expect(htmlText(feed.entries[1]!.title)).toBe("Flip: planned");
    const updated = feed.entries.map((entry) => entry.updated);
    expect([...updated].sort().reverse()).toEqual(updated);
  });

  it("finds public changes behind hundreds of hidden ones", async () => {
    const p = await ctx.importProject({
      project: { settings: { show_denied: false, show_archived: false } },
      features: [
        { ref: "pub", board: "roadmap", column: "c-planned", heading: "Public" },
        { ref: "hid", board: "roadmap", column: "c-denied", heading: "Hidden" },
      ],
    });
    await patchFeature(p, "pub", { status: "in_progress" });
    await patchFeature(p, "hid", { status: "archived" });
    // 450 more changes of the hidden feature (hidden before and after), copies of the real one.
    await sql`INSERT INTO events (project_id, type, data, created_at)
      SELECT e.project_id, e.type, e.data, e.created_at + g * interval '1 millisecond'
      FROM events e, generate_series(1, 450) g
      WHERE e.project_id = (SELECT id FROM projects WHERE slug = ${p.slug}) AND e.type = 'feature.status_changed'
        AND e.data->'object'->>'id' = ${String(p.ids.ids.features.hid)}`.execute(ctx.db);
    await patchFeature(p, "pub", { status: "done" });
    const events = await statusChangeIds(p);
    expect(events).toHaveLength(453);
    const feed = await feedOf(p, "roadmap");
    expect(feed.entries.map((entry) => entry.id)).toEqual([events[0], events[452]].map((id) => `urn:feedback-board:${p.slug}:event:${id}`));
    expect(feed.entries.map((entry) => htmlText(entry.title))).toEqual(["Public: done", "Public: in_progress"]);
  });

  it("links entries to the owner's board page when board_url is set", async () => {
    const p = await ctx.importProject({ features: [{ ref: "a", board: "roadmap", column: "c-planned", heading: "A" }] });
    const settings = {
      email_enabled: false,
      from_name: null,
      from_address: null,
      reply_to: null,
      digest_minutes: 15,
      board_url: "https://board.example/ideas/{feature_id}?ref=feed",
    };
    await ctx.db
      .updateTable("projects")
      .set({ notification_settings: sql<string>`${JSON.stringify(settings)}::text::jsonb` })
      .where("slug", "=", p.slug)
      .execute();
    await patchFeature(p, "a", { status: "done" });
    const feed = await feedOf(p, "roadmap");
    expect(feed.entries[0]!.links).toEqual([{ rel: null, href: `https://board.example/ideas/${p.ids.ids.features.a}?ref=feed` }]);
  });

  it("is empty with the project's created_at as updated when there is no status change", async () => {
    const p = await ctx.importProject({ features: [{ ref: "a", board: "roadmap", column: "c-planned", heading: "A" }] });
    const feed = await feedOf(p, "roadmap");
    expect(feed.entries).toEqual([]);
    expect(feed.updated).toBe(await projectCreatedAt(p.slug));
  });
});

describe("escaping", () => {
  // Markup, CDATA ends, an entity-looking text and characters XML 1.0 cannot hold (dropped).
  const nasty = 'Fix <b>bold</b> & "quotes" ]]> twice ]]> &amp; \u0001\u0008\u001f\ufffe end';
  const shown = 'Fix <b>bold</b> & "quotes" ]]> twice ]]> &amp;  end';
  const projectName = "R&amp;D <Lab> ]]> & co\u0007";

  it("keeps board texts intact through a well-formed document", async () => {
    const p = await ctx.importProject({
      project: { name: projectName },
      features: [{ ref: "a", board: "roadmap", column: "c-planned", heading: nasty }],
      releases: [{ ref: "r", name: nasty, slug: "r", body: "Body", published_at: new Date(Date.now() - HOUR).toISOString(), features: [] }],
    });
    // Sanitized HTML may still hold "]]>" (in text or in an attribute value).
    await ctx.db
      .updateTable("releases")
      .set({ body_html: '<p title="a]]>b">one ]]> two ]]> <em>three</em></p>' })
      .where("id", "=", p.ids.ids.releases.r)
      .execute();
    await patchFeature(p, "a", { status: "in_progress" });

    const changelog = await feedOf(p, "changelog");
    expect(changelog.title).toBe("R&amp;D <Lab> ]]> & co changelog");
    expect(changelog.authorName).toBe("R&amp;D <Lab> ]]> & co");
    const release = changelog.entries[0]!;
    expect(htmlText(release.title)).toBe(shown);
    expect(release.content).toBe('<p title="a]]&gt;b">one ]]&gt; two ]]&gt; <em>three</em></p>');
    const template = new (await import("jsdom")).JSDOM(release.content ?? "").window.document;
    expect(template.querySelector("p")?.getAttribute("title")).toBe("a]]>b");
    expect(htmlText(release.content ?? "")).toBe("one ]]> two ]]> three");

    const roadmap = await feedOf(p, "roadmap");
    expect(roadmap.title).toBe("R&amp;D <Lab> ]]> & co roadmap");
    expect(htmlText(roadmap.entries[0]!.title)).toBe(`${shown}: in_progress`);
  });
});
