/**
 * Email notifications (engagement-api-v3.md, "Email notifications", "Snapshot and erasure"):
 * settings, the message as a real SMTP server receives it (smtp-server + mailparser), digests,
 * read-before-send, eligibility, one-click unsubscribe, the owner's log, delivery failures and
 * retries, two workers claiming at once, erasure and the snapshot. Notifications are inserted
 * with SQL (the consumer that makes them from events is tested on its own); the email worker's
 * passes run on the test clock (EmailWorker.runOnce), and one test runs the server's own loop.
 */
import { randomBytes } from "node:crypto";
import type { ParsedMail } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, openDatabase } from "../db/connect.ts";
import { exportSnapshot } from "../src/admin/snapshot-export.ts";
import { importSnapshot } from "../src/admin/snapshot-import.ts";
import { SnapshotValidationError } from "../src/admin/snapshot-validate.ts";
import { parseConfig } from "../src/config.ts";
import { EmailWorker, startEmailWorker } from "../src/events/email/email-worker.ts";
import { createServer } from "../src/http-server.ts";
import { publicBaseUrl } from "../src/lib/http/public-base-url.ts";
import { type Answer, body, buildSnapshot, createTestContext, type OwnerErrorAnswer, type TestContext } from "./support/harness.ts";
import { type SmtpSink, startSmtpSink } from "./support/smtp-sink.ts";

let ctx: TestContext;
let sink: SmtpSink;
let seq = BigInt(Date.now()) * 1000n;
const MINUTE = 60_000;

beforeAll(async () => {
  sink = await startSmtpSink();
  ctx = await createTestContext({
    SMTP_URL: sink.url,
    PUBLIC_BASE_URL: "http://board.test/",
    EMAIL_RETRY_SCHEDULE_SECONDS: "60,300,1800,7200,21600",
  });
});

afterAll(async () => {
  await ctx?.close();
  await sink?.close();
});

type EmailsAnswer = Answer<"/api/v3/projects/{slug}/admin/emails", "get">;
type SettingsAnswer = Answer<"/api/v3/projects/{slug}/admin/settings", "get">;
type VoterAnswer = Answer<"/api/v3/projects/{slug}/admin/voters/{voter_id}", "get">;
type UnsubscribeAnswer = Answer<"/api/v3/unsubscribe/{token}", "get">;

const unique = () => randomBytes(4).toString("hex");

interface Board {
  slug: string;
  secretKey: string;
  projectId: number;
  features: Record<string, number>;
  voters: Record<string, { publicId: string; id: number; email: string | null }>;
}

const HOSTILE_HEADING = `Night <b>theme</b> & "dark" 'mode'`;

/** A project with email on (overridable), sso voters ada and bob with addresses, cy without, an anonymous dan. */
async function board(notifications: Record<string, unknown> = {}, name = "Lumen"): Promise<Board> {
  const tag = unique();
  const emails = { ada: `ada-${tag}@example.com`, bob: `bob-${tag}@example.com` };
  const imported = await ctx.importProject({
    project: {
      name,
      notifications: {
        email_enabled: true,
        from_name: "Lumen Updates",
        from_address: "updates@lumen.test",
        reply_to: "help@lumen.test",
        digest_minutes: 0,
        board_url: "https://lumen.test/feedback/{feature_id}?from=email",
        ...notifications,
      },
    },
    voters: [
      { ref: "ada", kind: "sso", sso_id: `ada-${tag}`, display_name: "Ada", email: emails.ada },
      { ref: "bob", kind: "sso", sso_id: `bob-${tag}`, display_name: "Bob", email: emails.bob },
      { ref: "cy", kind: "sso", sso_id: `cy-${tag}`, display_name: "Cy", email: null },
      { ref: "dan", kind: "anonymous", display_name: "Dan", email: `dan-${tag}@example.com` },
    ],
    features: [
      { ref: "night", board: "roadmap", column: "c-open", heading: HOSTILE_HEADING },
      { ref: "export", board: "roadmap", column: "c-planned", heading: "CSV export" },
      { ref: "sso", board: "roadmap", column: "c-planned", heading: "SAML login" },
    ],
  });
  const project = await ctx.db.selectFrom("projects").select("id").where("slug", "=", imported.slug).executeTakeFirstOrThrow();
  const rows = await ctx.db.selectFrom("voters").select(["id", "public_id", "email"]).where("project_id", "=", project.id).execute();
  const voters: Board["voters"] = {};
  for (const [ref, publicId] of Object.entries(imported.ids.ids.voters as Record<string, string>)) {
    const row = rows.find((r) => r.public_id === publicId)!;
    voters[ref] = { publicId, id: row.id, email: row.email };
  }
  return { slug: imported.slug, secretKey: imported.secretKey, projectId: project.id, features: imported.ids.ids.features, voters };
}

/** Inserts a notification as the consumer would; returns its id. */
async function notify(b: Board, voter: string, feature: string, at: number, type = "status_changed", data: Record<string, unknown> = {}) {
  seq += 1n;
  const row = await ctx.db
    .insertInto("notifications")
    .values({
      project_id: b.projectId,
      voter_id: b.voters[voter]!.id,
      feature_id: b.features[feature]!,
      event_seq: String(seq),
      type,
      data: type === "status_changed" && Object.keys(data).length === 0 ? { from: "open", to: "planned" } : data,
      created_at: new Date(at),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return String(row.id);
}

async function markRead(id: string, at: number) {
  await ctx.db
    .updateTable("notifications")
    .set({ read_at: new Date(at) })
    .where("id", "=", id)
    .execute();
}

/** A worker on the test clock (its passes are run by hand). */
function worker(db = ctx.db) {
  return new EmailWorker({ db, config: ctx.deps.config, logger: ctx.deps.logger }, { now: () => ctx.clock.now() });
}

/** One worker pass at `at` (the clock stays there). */
async function passAt(at: number, w = worker()) {
  ctx.clock.pin(at);
  return w.runOnce();
}

async function emailLog(b: Board, query = ""): Promise<EmailsAnswer> {
  const response = await ctx.get(`/api/v3/projects/${b.slug}/admin/emails${query}`, b.secretKey);
  expect(response.status).toBe(200);
  return body<EmailsAnswer>(response);
}

function header(mail: ParsedMail, name: string): string | undefined {
  const line = mail.headerLines.find((h) => h.key === name.toLowerCase());
  return line ? line.line.slice(line.line.indexOf(":") + 1).trim() : undefined;
}

function unsubscribePath(mail: ParsedMail): string {
  const value = header(mail, "List-Unsubscribe")!;
  const url = new URL(value.replace(/^<|>$/g, ""));
  expect(url.origin).toBe("http://board.test");
  return url.pathname;
}

/** A time after every earlier test's (emails left pending by one test never become due in another's past). */
let clockBase = Date.now();
function nextBase(): number {
  clockBase += 3 * 24 * 60 * MINUTE;
  return clockBase;
}

describe("configuration", () => {
  it("takes smtp:// and smtps:// URLs with optional credentials and refuses anything else at start", () => {
    for (const url of ["smtp://mail.example.com", "smtps://user:p%40ss@mail.example.com:465", "smtp://127.0.0.1:2525"]) {
      expect(parseConfig({ SMTP_URL: url }).SMTP_URL).toBe(url);
    }
    expect(parseConfig({ SMTP_URL: "" }).SMTP_URL).toBeUndefined();
    for (const url of ["http://mail.example.com", "smtp://", "mail.example.com:25", "smtp:mail"]) {
      expect(() => parseConfig({ SMTP_URL: url }), url).toThrow(/SMTP_URL/);
    }
  });

  it("PUBLIC_BASE_URL defaults to http://{HOST}:{PORT} and refuses a non-http address", () => {
    expect(publicBaseUrl(parseConfig({ HOST: "127.0.0.1", PORT: "9090" }))).toBe("http://127.0.0.1:9090");
    expect(publicBaseUrl(parseConfig({ HOST: "::1", PORT: "8080" }))).toBe("http://[::1]:8080");
    expect(publicBaseUrl(parseConfig({ PUBLIC_BASE_URL: "https://feedback.example.com/board/" }))).toBe(
      "https://feedback.example.com/board",
    );
    expect(() => parseConfig({ PUBLIC_BASE_URL: "ftp://x.example" })).toThrow(/PUBLIC_BASE_URL/);
  });
});

describe("settings", () => {
  it("GET shows the defaults, from_name as the project's name; PATCH merges key by key", async () => {
    const b = await ctx.importProject({ project: { name: "Quiet board" } });
    const read = await body<SettingsAnswer>(await ctx.get(`/api/v3/projects/${b.slug}/admin/settings`, b.secretKey));
    expect(read.data.notifications).toEqual({
      email_enabled: false,
      from_name: "Quiet board",
      from_address: null,
      reply_to: null,
      digest_minutes: 15,
      board_url: null,
      changelog_url: null,
    });
    const patched = await ctx.send("PATCH", `/api/v3/projects/${b.slug}/admin/settings`, b.secretKey, {
      notifications: { from_address: "news@quiet.test", email_enabled: true },
    });
    expect(patched.status).toBe(200);
    const second = await ctx.send("PATCH", `/api/v3/projects/${b.slug}/admin/settings`, b.secretKey, {
      notifications: { digest_minutes: 0, board_url: "https://quiet.test/f/{feature_id}" },
    });
    expect((await body<SettingsAnswer>(second)).data.notifications).toEqual({
      email_enabled: true,
      from_name: "Quiet board",
      from_address: "news@quiet.test",
      reply_to: null,
      digest_minutes: 0,
      board_url: "https://quiet.test/f/{feature_id}",
      changelog_url: null,
    });
  });

  it("refuses bad values with 422 naming notifications.<key>, and changes nothing", async () => {
    const b = await ctx.importProject({ project: { name: "Strict board" } });
    const cases: [Record<string, unknown>, string][] = [
      [{ email_enabled: true }, "notifications.from_address"],
      [{ email_enabled: "yes" }, "notifications.email_enabled"],
      [{ from_name: "" }, "notifications.from_name"],
      [{ from_name: "x".repeat(101) }, "notifications.from_name"],
      [{ from_name: "Evil\r\nBcc: x@example.com" }, "notifications.from_name"],
      [{ from_name: null }, "notifications.from_name"],
      [{ from_address: "not an address" }, "notifications.from_address"],
      [{ reply_to: "nobody" }, "notifications.reply_to"],
      [{ digest_minutes: 1441 }, "notifications.digest_minutes"],
      [{ digest_minutes: -1 }, "notifications.digest_minutes"],
      [{ digest_minutes: 2.5 }, "notifications.digest_minutes"],
      [{ board_url: "https://lumen.test/feedback" }, "notifications.board_url"],
      [{ board_url: "ftp://lumen.test/{feature_id}" }, "notifications.board_url"],
      [{ board_url: "{feature_id}" }, "notifications.board_url"],
      [{ sender: "x" }, "notifications.sender"],
    ];
    for (const [notifications, field] of cases) {
      const response = await ctx.send("PATCH", `/api/v3/projects/${b.slug}/admin/settings`, b.secretKey, { notifications });
      expect(response.status, JSON.stringify(notifications)).toBe(422);
      const error = (await body<OwnerErrorAnswer>(response)).error;
      expect(error.code).toBe("validation_failed");
      expect(error.field, JSON.stringify(notifications)).toBe(field);
    }
    // Enabled with an address, then clearing the address while on: refused too.
    await ctx.send("PATCH", `/api/v3/projects/${b.slug}/admin/settings`, b.secretKey, {
      notifications: { email_enabled: true, from_address: "a@strict.test" },
    });
    const cleared = await ctx.send("PATCH", `/api/v3/projects/${b.slug}/admin/settings`, b.secretKey, {
      notifications: { from_address: null },
    });
    expect((await body<OwnerErrorAnswer>(cleared)).error.field).toBe("notifications.from_address");
    const read = await body<SettingsAnswer>(await ctx.get(`/api/v3/projects/${b.slug}/admin/settings`, b.secretKey));
    expect(read.data.notifications).toMatchObject({ email_enabled: true, from_address: "a@strict.test", digest_minutes: 15 });
  });
});

describe("the message", () => {
  it("digest 0: each notification its own email, with every header and both parts as the section says", async () => {
    const b = await board({ digest_minutes: 0 });
    const t = nextBase();
    const first = await notify(b, "ada", "night", t, "team_commented", {
      comment_id: 7,
      author_name: "Zoë <script>",
      excerpt: `<img src=x onerror="alert(1)"> & more`,
    });
    const second = await notify(b, "ada", "export", t + 1000, "shipped", { release: { id: 3, name: "2.0 <beta>" } });
    expect((await passAt(t + 1500)).sent).toBeGreaterThanOrEqual(2);
    const mails = sink.to(b.voters.ada!.email!);
    expect(mails).toHaveLength(2);
    const [a, c] = mails as [ParsedMail, ParsedMail];

    expect(a.from?.value).toEqual([{ name: "Lumen Updates", address: "updates@lumen.test" }]);
    expect(a.replyTo?.value).toEqual([{ name: "", address: "help@lumen.test" }]);
    expect(a.to && !Array.isArray(a.to) ? a.to.value : []).toEqual([{ name: "", address: b.voters.ada!.email }]);
    expect(a.subject).toBe(`[Lumen] ${HOSTILE_HEADING}`);
    expect(c.subject).toBe("[Lumen] CSV export");
    expect(a.messageId).toMatch(/^<[^<>@]+@lumen\.test>$/);
    expect(c.messageId).not.toBe(a.messageId);
    expect(header(a, "List-Unsubscribe")).toMatch(/^<http:\/\/board\.test\/api\/v3\/unsubscribe\/[^>]+>$/);
    expect(header(a, "List-Unsubscribe-Post")).toBe("List-Unsubscribe=One-Click");

    // text/plain: board texts as they are, with the feature's link.
    expect(a.text).toContain(HOSTILE_HEADING);
    expect(a.text).toContain(`Zoë <script>`);
    expect(a.text).toContain(`<img src=x onerror="alert(1)"> & more`);
    expect(a.text).toContain(`https://lumen.test/feedback/${b.features.night}?from=email`);
    expect(c.text).toContain("2.0 <beta>");
    // text/html: every board text escaped; no markup of theirs survives.
    const html = a.html as string;
    expect(html).toContain("Night &lt;b&gt;theme&lt;/b&gt; &amp; &quot;dark&quot; &#39;mode&#39;");
    expect(html).toContain("Zoë &lt;script&gt;");
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; more");
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<b>theme");
    expect(html).not.toContain("<img");
    expect(html).toContain(`href="https://lumen.test/feedback/${b.features.night}?from=email"`);
    expect(c.html as string).toContain("2.0 &lt;beta&gt;");

    const log = await emailLog(b);
    expect(log.data.map((email) => email.notification_ids)).toEqual([[`ntf_${second}`], [`ntf_${first}`]]);
    expect(log.data.every((email) => email.status === "sent" && email.attempts === 1 && email.sent_at !== null)).toBe(true);
    expect(log.data[0]).toMatchObject({
      voter_id: b.voters.ada!.publicId,
      to: b.voters.ada!.email,
      subject: "[Lumen] CSV export",
      last_error: null,
    });
  });

  it("no Reply-To without reply_to, no links without board_url, from_name defaults to the project's name", async () => {
    const b = await board({ reply_to: null, board_url: null, from_name: null }, "Plain board");
    const t = nextBase();
    await notify(b, "bob", "export", t);
    await passAt(t + 100);
    const [mail] = sink.to(b.voters.bob!.email!) as [ParsedMail];
    expect(mail.replyTo).toBeUndefined();
    expect(mail.from?.value).toEqual([{ name: "Plain board", address: "updates@lumen.test" }]);
    expect(mail.text).not.toContain("https://lumen.test/feedback");
    expect(mail.html as string).not.toContain("https://lumen.test/feedback");
    expect(mail.text).toContain("CSV export: status changed from Suggestions to Planned");
  });
});

describe("links", () => {
  it("a shipped notification links to the release on changelog_url; without the settings an email has no links", async () => {
    const b = await board({ digest_minutes: 0, changelog_url: "https://lumen.test/changelog/{release_slug}" });
    const release = await ctx.db
      .insertInto("releases")
      .values({ project_id: b.projectId, name: "2.0", slug: "2-0", published_at: new Date() })
      .returning("id")
      .executeTakeFirstOrThrow();
    const t = nextBase();
    await notify(b, "ada", "export", t, "shipped", { release: { id: release.id, name: "2.0" } });
    await passAt(t + 1000);
    const [mail] = sink.to(b.voters.ada!.email!) as [ParsedMail];
    expect(mail.text).toContain(`https://lumen.test/feedback/${b.features.export}?from=email`);
    expect(mail.text).toContain("https://lumen.test/changelog/2-0");
    expect(mail.html as string).toContain('<a href="https://lumen.test/changelog/2-0">Release notes</a>');

    const bare = await board({ digest_minutes: 0, board_url: null, changelog_url: null });
    await notify(bare, "bob", "export", t + 2000, "shipped", { release: { id: release.id, name: "2.0" } });
    await passAt(t + 3000);
    const [plain] = sink.to(bare.voters.bob!.email!) as [ParsedMail];
    // The only address left is the unsubscribe link: no feature or release link, no API route.
    const addresses = (plain.text ?? "").match(/https?:\/\/\S+/g) ?? [];
    expect(addresses).toEqual([expect.stringMatching(/^http:\/\/board\.test\/api\/v3\/unsubscribe\//)]);
  });
});

describe("statuses as the board names them", () => {
  it("shows each status as its roadmap column's name (escaped in HTML), else the status in words", async () => {
    const b = await board({ digest_minutes: 0 });
    await ctx.db
      .updateTable("columns")
      .set({ name: "Next <up> & soon" })
      .where("project_id", "=", b.projectId)
      .where("status", "=", "planned")
      .execute();
    const t = nextBase();
    await notify(b, "ada", "export", t, "status_changed", { from: "open", to: "planned" });
    await notify(b, "ada", "sso", t + 10, "status_changed", { from: "in_progress", to: "archived" });
    await notify(b, "ada", "night", t + 20, "status_changed", { from: "done", to: "under_review" });
    await passAt(t + 1000);
    const mails = sink.to(b.voters.ada!.email!);
    expect(mails).toHaveLength(3);
    // Sent concurrently: told apart by subject, not by arrival order.
    const bySubject = (heading: string) => mails.find((mail) => mail.subject === `[Lumen] ${heading}`)!;
    const [planned, archived, unknown] = [bySubject("CSV export"), bySubject("SAML login"), bySubject(HOSTILE_HEADING)];
    expect(planned.text).toContain("CSV export: status changed from Suggestions to Next <up> & soon");
    expect(planned.html as string).toContain("status changed from Suggestions to Next &lt;up&gt; &amp; soon");
    expect(archived.text).toContain("SAML login: status changed from In progress to Archived");
    expect(unknown.text).toContain(": status changed from Done to Under review");
    for (const mail of mails) {
      for (const raw of ["in_progress", "under_review", " open ", " planned", "archived"]) {
        expect(`${mail.subject}\n${mail.text}`).not.toContain(raw);
      }
    }
  });
});

describe("digests", () => {
  it("gathers a voter's notifications for digest_minutes after the first, sends one email after the window, and leaves out what was read", async () => {
    const b = await board({ digest_minutes: 15 });
    const t = nextBase();
    const n1 = await notify(b, "ada", "night", t);
    const n2 = await notify(b, "ada", "export", t + 5 * MINUTE);
    const n3 = await notify(b, "ada", "sso", t + 10 * MINUTE);
    const later = await notify(b, "ada", "sso", t + 16 * MINUTE, "responded", { developer_response: "Soon", response_is_denial: false });
    await markRead(n2, t + 6 * MINUTE);
    const bobs = await notify(b, "bob", "export", t + 2 * MINUTE);

    await passAt(t + 14 * MINUTE);
    expect(sink.to(b.voters.ada!.email!)).toHaveLength(0);
    await passAt(t + 15 * MINUTE + 1000);
    const [digest] = sink.to(b.voters.ada!.email!) as [ParsedMail];
    expect(sink.to(b.voters.ada!.email!)).toHaveLength(1);
    expect(digest.subject).toBe(`[Lumen] ${HOSTILE_HEADING} and 1 more`);
    expect(digest.text).toContain(HOSTILE_HEADING);
    expect(digest.text).toContain("SAML login");
    expect(digest.text).not.toContain("CSV export");
    expect(digest.html as string).toContain("SAML login");
    const log = await emailLog(b);
    expect(log.data.find((email) => email.to === b.voters.ada!.email)?.notification_ids).toEqual([`ntf_${n1}`, `ntf_${n3}`]);

    // bob's window (from t+2) is still open at t+15; it closes at t+17.
    expect(sink.to(b.voters.bob!.email!)).toHaveLength(0);
    // The later notification opened a new window (t+16 .. t+31).
    await passAt(t + 17 * MINUTE + 1000);
    expect(sink.to(b.voters.bob!.email!)).toHaveLength(1);
    expect(sink.to(b.voters.ada!.email!)).toHaveLength(1);
    await passAt(t + 31 * MINUTE + 1000);
    const mails = sink.to(b.voters.ada!.email!);
    expect(mails).toHaveLength(2);
    expect(mails[1]?.text).toContain("the team responded: Soon");
    const after = await emailLog(b);
    expect(after.data.map((email) => email.notification_ids)).toEqual(
      expect.arrayContaining([[`ntf_${later}`], [`ntf_${bobs}`], [`ntf_${n1}`, `ntf_${n3}`]]),
    );
  });

  it("a notification read after its email was made but before it leaves is left out; an email left empty is not sent", async () => {
    const b = await board({ digest_minutes: 5 });
    const t = nextBase();
    const n1 = await notify(b, "ada", "night", t);
    const n2 = await notify(b, "ada", "export", t + MINUTE);
    const m1 = await notify(b, "bob", "night", t);
    // Gather without sending: the SMTP server refuses the first attempt with 421, then both are read.
    sink.refuseNextMessages(2, 421);
    await passAt(t + 5 * MINUTE + 1000);
    expect((await emailLog(b)).data.every((email) => email.status === "pending")).toBe(true);
    await markRead(n1, t + 6 * MINUTE);
    await markRead(m1, t + 6 * MINUTE);
    await passAt(t + 7 * MINUTE + 1000);
    const [mail] = sink.to(b.voters.ada!.email!) as [ParsedMail];
    expect(sink.to(b.voters.ada!.email!)).toHaveLength(1);
    expect(mail.subject).toBe("[Lumen] CSV export");
    expect(mail.text).not.toContain(HOSTILE_HEADING);
    expect(sink.to(b.voters.bob!.email!)).toHaveLength(0);
    const log = await emailLog(b);
    expect(log.data).toHaveLength(1);
    expect(log.data[0]).toMatchObject({ status: "sent", notification_ids: [`ntf_${n2}`], subject: "[Lumen] CSV export", attempts: 2 });
  });
});

describe("eligibility", () => {
  it("sends nothing to anonymous voters, voters without an address, or when email is off", async () => {
    const b = await board({ digest_minutes: 0 });
    const t = nextBase();
    await notify(b, "dan", "night", t);
    await notify(b, "cy", "night", t);
    await passAt(t + 1000);
    expect(sink.to(b.voters.dan!.email!)).toHaveLength(0);
    expect((await emailLog(b)).data).toHaveLength(0);

    const off = await board({ email_enabled: false, digest_minutes: 0 });
    await notify(off, "ada", "night", t + 2000);
    await passAt(t + 3000);
    expect(sink.to(off.voters.ada!.email!)).toHaveLength(0);
    // Turning it on later does not mail what was made while it was off.
    await ctx.send("PATCH", `/api/v3/projects/${off.slug}/admin/settings`, off.secretKey, { notifications: { email_enabled: true } });
    await passAt(t + 4000);
    expect(sink.to(off.voters.ada!.email!)).toHaveLength(0);
  });

  it("without SMTP_URL no email worker starts", () => {
    const config = parseConfig({ ...process.env, SMTP_URL: "" });
    expect(startEmailWorker({ db: ctx.db, config, logger: ctx.deps.logger })).toBeUndefined();
  });
});

describe("unsubscribe", () => {
  it("one-click POST to the header's URL unsubscribes (idempotent), GET reads the state, and no more email is sent", async () => {
    const b = await board({ digest_minutes: 0 });
    const t = nextBase();
    await notify(b, "ada", "night", t);
    await passAt(t + 1000);
    const [mail] = sink.to(b.voters.ada!.email!) as [ParsedMail];
    const path = unsubscribePath(mail);

    const before = await ctx.app.request(path);
    expect(before.status).toBe(200);
    expect((await body<UnsubscribeAnswer>(before)).data).toEqual({ project: b.slug, unsubscribed: false });
    expect(before.headers.get("Cache-Control")).toBe("private, max-age=0");
    for (let i = 0; i < 2; i++) {
      const post = await ctx.app.request(path, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: "List-Unsubscribe=One-Click",
      });
      expect(post.status).toBe(200);
      expect((await body<UnsubscribeAnswer>(post)).data).toEqual({ project: b.slug, unsubscribed: true });
    }
    expect((await body<UnsubscribeAnswer>(await ctx.app.request(path))).data).toEqual({ project: b.slug, unsubscribed: true });
    const voter = await body<VoterAnswer>(await ctx.get(`/api/v3/projects/${b.slug}/admin/voters/${b.voters.ada!.publicId}`, b.secretKey));
    expect(voter.data.email_unsubscribed).toBe(true);

    await notify(b, "ada", "export", t + 2000);
    await passAt(t + 3000);
    expect(sink.to(b.voters.ada!.email!)).toHaveLength(1);

    // The owner clears it: emails again from the next notification.
    const cleared = await ctx.send("PATCH", `/api/v3/projects/${b.slug}/admin/voters/${b.voters.ada!.publicId}`, b.secretKey, {
      email_unsubscribed: false,
    });
    expect((await body<VoterAnswer>(cleared)).data.email_unsubscribed).toBe(false);
    await notify(b, "ada", "sso", t + 4000);
    await passAt(t + 5000);
    expect(sink.to(b.voters.ada!.email!)).toHaveLength(2);
    expect((await body<UnsubscribeAnswer>(await ctx.app.request(path))).data.unsubscribed).toBe(false);
    // The owner may unsubscribe a voter too (a request by other means).
    const set = await ctx.send("PATCH", `/api/v3/projects/${b.slug}/admin/voters/${b.voters.ada!.publicId}`, b.secretKey, {
      email_unsubscribed: true,
    });
    expect((await body<VoterAnswer>(set)).data.email_unsubscribed).toBe(true);
    const bad = await ctx.send("PATCH", `/api/v3/projects/${b.slug}/admin/voters/${b.voters.ada!.publicId}`, b.secretKey, {
      email_unsubscribed: "no",
    });
    expect((await body<OwnerErrorAnswer>(bad)).error.field).toBe("email_unsubscribed");
  });

  it("a browser (Accept preferring text/html) gets an HTML page: GET shows the state and a button, POST says it is done", async () => {
    const b = await board({ digest_minutes: 0 }, `Lumen <b>"&"</b>`);
    const t = nextBase();
    await notify(b, "ada", "night", t);
    await passAt(t + 1000);
    const path = unsubscribePath(sink.to(b.voters.ada!.email!)[0]!);
    const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    const voterState = async () =>
      (await body<VoterAnswer>(await ctx.get(`/api/v3/projects/${b.slug}/admin/voters/${b.voters.ada!.publicId}`, b.secretKey))).data
        .email_unsubscribed;

    const page = await ctx.app.request(path, { headers: { Accept: browser } });
    expect(page.status).toBe(200);
    expect(page.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("Vary")).toMatch(/\bAccept\b/);
    expect(page.headers.get("Content-Security-Policy")).toMatch(/default-src 'none'/);
    const html = await page.text();
    expect(html).toMatch(/^<!doctype html><html lang="en">/);
    expect(html).toContain("<title>Unsubscribe from Lumen &lt;b&gt;&quot;&amp;&quot;&lt;/b&gt;</title>");
    expect(html).not.toContain("<b>");
    expect(html).toContain("You receive emails from");
    expect(html.match(/<form method="post">/g)).toHaveLength(1);
    expect(html.match(/<button/g)).toHaveLength(1);
    expect(html).not.toMatch(/<script|action=/);
    // Opening the page (as a mail scanner does) changes nothing.
    expect(await voterState()).toBe(false);

    // JSON stays the answer without a preference for HTML.
    for (const accept of [undefined, "*/*", "application/json", "text/html;q=0.5, application/json", "text/html, application/json"]) {
      const answer = await ctx.app.request(path, { headers: accept ? { Accept: accept } : {} });
      expect(answer.headers.get("Content-Type"), String(accept)).toMatch(/^application\/json/);
    }

    // The page's button: a form POST with no field, from a browser.
    const done = await ctx.app.request(path, {
      method: "POST",
      headers: { Accept: browser, "Content-Type": "application/x-www-form-urlencoded" },
      body: "",
    });
    expect(done.status).toBe(200);
    expect(done.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
    const doneHtml = await done.text();
    expect(doneHtml).toContain("You are unsubscribed");
    expect(doneHtml).toContain("no more emails from Lumen &lt;b&gt;");
    expect(doneHtml).not.toContain("<form");
    expect(await voterState()).toBe(true);
    const after = await ctx.app.request(path, { headers: { Accept: browser } });
    expect(await after.text()).toContain("You are already unsubscribed");

    // The one-click form answers JSON whatever its Accept header.
    for (const contentType of ["application/x-www-form-urlencoded", undefined]) {
      const init: RequestInit = { method: "POST", headers: { Accept: browser } };
      if (contentType) {
        init.headers = { ...init.headers, "Content-Type": contentType };
        init.body = "List-Unsubscribe=One-Click";
      } else {
        const form = new FormData();
        form.set("List-Unsubscribe", "One-Click");
        init.body = form;
      }
      const oneClick = await ctx.app.request(path, init);
      expect(oneClick.status).toBe(200);
      expect((await body<UnsubscribeAnswer>(oneClick)).data).toEqual({ project: b.slug, unsubscribed: true });
    }
    // Errors stay JSON.
    const missing = await ctx.app.request("/api/v3/unsubscribe/nonsense", { headers: { Accept: browser } });
    expect(missing.status).toBe(404);
    expect((await body<OwnerErrorAnswer>(missing)).error.code).toBe("not_found");
  });

  it("a forged or altered token answers 404 not_found and changes nothing; no key is needed or used", async () => {
    const b = await board({ digest_minutes: 0 });
    const t = nextBase();
    await notify(b, "bob", "night", t);
    await passAt(t + 1000);
    const path = unsubscribePath(sink.to(b.voters.bob!.email!)[0]!);
    const token = path.split("/").at(-1)!;
    const [slug, voter, mac] = token.split(".") as [string, string, string];
    const forged = [
      `${slug}.${b.voters.ada!.publicId}.${mac}`,
      `${slug}.${voter}.${mac.slice(0, -1)}${mac.endsWith("A") ? "B" : "A"}`,
      `${slug}.${voter}.${"A".repeat(43)}`,
      "nonsense",
      "x".repeat(300),
    ];
    for (const bad of forged) {
      for (const method of ["GET", "POST"]) {
        const response = await ctx.app.request(`/api/v3/unsubscribe/${bad}`, { method });
        expect(response.status, `${method} ${bad}`).toBe(404);
        expect((await body<OwnerErrorAnswer>(response)).error.code).toBe("not_found");
      }
    }
    const ada = await body<VoterAnswer>(await ctx.get(`/api/v3/projects/${b.slug}/admin/voters/${b.voters.ada!.publicId}`, b.secretKey));
    expect(ada.data.email_unsubscribed).toBe(false);
    // A key sent along is ignored (no key budget, no key check).
    const withKey = await ctx.app.request(path, { headers: { "X-API-Key": "not-a-key" } });
    expect(withKey.status).toBe(200);
  });

  it("erasing a voter removes their emails and their token stops working (404)", async () => {
    const b = await board({ digest_minutes: 0 });
    const t = nextBase();
    await notify(b, "bob", "night", t);
    await notify(b, "ada", "night", t);
    await passAt(t + 1000);
    const path = unsubscribePath(sink.to(b.voters.bob!.email!)[0]!);
    expect((await emailLog(b)).data).toHaveLength(2);
    const erased = await ctx.send("DELETE", `/api/v3/projects/${b.slug}/admin/voters/${b.voters.bob!.publicId}`, b.secretKey);
    expect(erased.status).toBe(200);
    const log = await emailLog(b);
    expect(log.data.map((email) => email.voter_id)).toEqual([b.voters.ada!.publicId]);
    expect(await ctx.db.selectFrom("emails").select("id").where("voter_id", "=", b.voters.bob!.id).execute()).toEqual([]);
    for (const method of ["GET", "POST"]) expect((await ctx.app.request(path, { method })).status).toBe(404);
  });
});

describe("delivery", () => {
  it("a 5xx recipient refusal fails the email at once", async () => {
    const b = await board({ digest_minutes: 0 });
    sink.refuseRecipient(b.voters.ada!.email!, 550);
    const t = nextBase();
    await notify(b, "ada", "night", t);
    await passAt(t + 1000);
    await passAt(t + 2 * 3600_000);
    const [email] = (await emailLog(b, "?status=failed")).data;
    expect(email).toMatchObject({ status: "failed", attempts: 1, sent_at: null });
    expect(email?.last_error).toMatch(/550/);
    expect((await emailLog(b, "?status=pending")).data).toHaveLength(0);
  });

  it("a 4xx answer is retried after about 1 minute; the email is pending meanwhile", async () => {
    const b = await board({ digest_minutes: 0 });
    sink.refuseRecipient(b.voters.ada!.email!, 450);
    const t = nextBase();
    await notify(b, "ada", "night", t);
    await passAt(t + 1000);
    let [email] = (await emailLog(b)).data;
    expect(email).toMatchObject({ status: "pending", attempts: 1 });
    expect(email?.last_error).toMatch(/450/);
    await passAt(t + 50_000);
    expect((await emailLog(b)).data[0]?.attempts).toBe(1);
    sink.refuseRecipient(b.voters.ada!.email!, undefined);
    await passAt(t + 62_000);
    [email] = (await emailLog(b)).data;
    expect(email).toMatchObject({ status: "sent", attempts: 2 });
    expect(sink.to(b.voters.ada!.email!)).toHaveLength(1);
  });

  it("4xx answers follow the schedule (1, 5, 30 min, 2 h, 6 h), then the email is failed", async () => {
    const b = await board({ digest_minutes: 0 });
    sink.refuseRecipient(b.voters.bob!.email!, 421);
    const t = nextBase();
    await notify(b, "bob", "night", t);
    let at = t + 1000;
    await passAt(at);
    for (const delay of [60, 300, 1800, 7200, 21600]) {
      await passAt(at + delay * 1000 - 5000);
      const before = (await emailLog(b)).data[0]!;
      await passAt(at + delay * 1000 + 1000);
      const after = (await emailLog(b)).data[0]!;
      expect(after.attempts, `after ${delay} s`).toBe(before.attempts + 1);
      at += delay * 1000 + 1000;
    }
    const [email] = (await emailLog(b)).data;
    expect(email).toMatchObject({ status: "failed", attempts: 6 });
    sink.refuseRecipient(b.voters.bob!.email!, undefined);
  });

  it("a server that is down is retried, and the email leaves once it is up", async () => {
    const b = await board({ digest_minutes: 0 });
    const t = nextBase();
    await notify(b, "ada", "export", t);
    await sink.stop();
    try {
      await passAt(t + 1000);
      const [email] = (await emailLog(b)).data;
      expect(email).toMatchObject({ status: "pending", attempts: 1 });
      expect(email?.last_error).not.toBeNull();
    } finally {
      await sink.restart();
    }
    await passAt(t + 62_000);
    expect((await emailLog(b)).data[0]).toMatchObject({ status: "sent", attempts: 2 });
    expect(sink.to(b.voters.ada!.email!)).toHaveLength(1);
  });

  it("two workers claiming at once never send one email twice", async () => {
    const b = await board({ digest_minutes: 0 });
    const t = nextBase();
    for (let i = 0; i < 20; i++) {
      await notify(b, "ada", ["night", "export", "sso"][i % 3]!, t + i);
      await notify(b, "bob", ["night", "export", "sso"][i % 3]!, t + i);
    }
    // A second database handle where there is a server to share (PGlite has one connection).
    let second: DatabaseHandle | undefined;
    if (ctx.deps.config.DATABASE_URL) second = await openDatabase({ DATABASE_URL: ctx.deps.config.DATABASE_URL, poolSize: 4 });
    try {
      ctx.clock.pin(t + 5000);
      const [one, two] = [worker(), worker(second?.db ?? ctx.db)];
      await Promise.all([one.runOnce(), two.runOnce(), one.runOnce(), two.runOnce()]);
    } finally {
      await second?.close();
    }
    const mails = [...sink.to(b.voters.ada!.email!), ...sink.to(b.voters.bob!.email!)];
    expect(mails).toHaveLength(40);
    expect(new Set(mails.map((mail) => mail.messageId)).size).toBe(40);
    const log = await emailLog(b, "?per_page=100");
    expect(log.data).toHaveLength(40);
    expect(log.data.every((email) => email.status === "sent" && email.attempts === 1)).toBe(true);
  });
});

describe("locks", () => {
  // Two connections are needed: only with a Postgres server.
  it.runIf(process.env.DATABASE_URL)("gathering never waits on a notification another writer holds (a voter marking it read)", async () => {
    const b = await board({ digest_minutes: 5 });
    const t = nextBase();
    const held = await notify(b, "ada", "night", t);
    const free = await notify(b, "ada", "export", t + 1000);
    const other = await openDatabase({ DATABASE_URL: ctx.deps.config.DATABASE_URL!, poolSize: 1 });
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked: () => void = () => {};
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = other.db.transaction().execute(async (trx) => {
      await trx.selectFrom("notifications").select("id").where("id", "=", held).forUpdate().execute();
      locked();
      await released;
      await trx
        .updateTable("notifications")
        .set({ read_at: new Date(t + 6 * MINUTE) })
        .where("id", "=", held)
        .execute();
    });
    try {
      await isLocked;
      const started = Date.now();
      await passAt(t + 5 * MINUTE + 1000);
      expect(Date.now() - started).toBeLessThan(3000);
      const log = await emailLog(b);
      expect(log.data.map((email) => email.notification_ids)).toEqual([[`ntf_${free}`]]);
    } finally {
      release();
      await holder;
      await other.close();
    }
    // Read in the meantime: the held one is skipped, never mailed.
    await passAt(t + 20 * MINUTE);
    expect(sink.to(b.voters.ada!.email!)).toHaveLength(1);
    expect((await emailLog(b)).data).toHaveLength(1);
  });
});

describe("the owner's log", () => {
  it("lists newest first with the status filter and paging; another project's emails are not shown", async () => {
    const b = await board({ digest_minutes: 0 });
    sink.refuseRecipient(b.voters.bob!.email!, 550);
    const t = nextBase();
    for (let i = 0; i < 3; i++) await notify(b, "ada", "night", t + i);
    await notify(b, "bob", "night", t + 10);
    await passAt(t + 1000);
    const all = await emailLog(b, "?per_page=2");
    expect(all.meta).toMatchObject({ total: 4, page: 1, per_page: 2 });
    expect(all.data).toHaveLength(2);
    const second = await emailLog(b, "?per_page=2&page=2");
    const ids = [...all.data, ...second.data].map((email) => email.id);
    expect(ids).toEqual([...ids].sort((x, y) => y - x));
    expect((await emailLog(b, "?status=failed")).data.map((email) => email.to)).toEqual([b.voters.bob!.email]);
    expect((await emailLog(b, "?status=sent")).meta?.total).toBe(3);
    const bad = await ctx.get(`/api/v3/projects/${b.slug}/admin/emails?status=bounced`, b.secretKey);
    expect(bad.status).toBe(422);
    expect((await body<OwnerErrorAnswer>(bad)).error.field).toBe("status");
    const other = await ctx.importProject();
    expect((await body<EmailsAnswer>(await ctx.get(`/api/v3/projects/${other.slug}/admin/emails`, other.secretKey))).data).toEqual([]);
  });
});

describe("snapshot", () => {
  it("exports and restores the notification settings and email_unsubscribed; refuses invalid settings with their path", async () => {
    const b = await board({ digest_minutes: 45, from_name: "Lumen News" });
    await ctx.send("PATCH", `/api/v3/projects/${b.slug}/admin/voters/${b.voters.bob!.publicId}`, b.secretKey, { email_unsubscribed: true });
    const exported = await exportSnapshot(ctx.db, b.slug);
    expect(exported.project.notifications).toEqual({
      email_enabled: true,
      from_name: "Lumen News",
      from_address: "updates@lumen.test",
      reply_to: "help@lumen.test",
      digest_minutes: 45,
      board_url: "https://lumen.test/feedback/{feature_id}?from=email",
      changelog_url: null,
    });
    const bob = exported.voters.find((voter) => voter.voter_id === b.voters.bob!.publicId);
    expect(bob?.email_unsubscribed).toBe(true);
    await importSnapshot(ctx.db, exported, { replace: true });
    const settings = await body<SettingsAnswer>(await ctx.get(`/api/v3/projects/${b.slug}/admin/settings`, b.secretKey));
    expect(settings.data.notifications).toMatchObject({ digest_minutes: 45, from_name: "Lumen News", email_enabled: true });
    const restored = await body<VoterAnswer>(
      await ctx.get(`/api/v3/projects/${b.slug}/admin/voters/${b.voters.bob!.publicId}`, b.secretKey),
    );
    expect(restored.data.email_unsubscribed).toBe(true);

    for (const [notifications, path] of [
      [{ email_enabled: true }, "project.notifications.from_address"],
      [{ digest_minutes: 2000 }, "project.notifications.digest_minutes"],
      [{ board_url: "https://x.test/no-placeholder" }, "project.notifications.board_url"],
      [{ changelog_url: "https://x.test/changelog" }, "project.notifications.changelog_url"],
    ] as const) {
      const error = await importSnapshot(ctx.db, buildSnapshot({ project: { notifications } }), {}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SnapshotValidationError);
      expect((error as SnapshotValidationError).issues.map((issue) => issue.path)).toContain(path);
    }
  });
});

describe("the server's email loop", () => {
  it("sends within seconds of a notification with digest 0, without any request", async () => {
    const b = await board({ digest_minutes: 0 });
    ctx.clock.release();
    // The context's deps as the server owns them, with a short poll; close() is left to the context.
    const config = Object.freeze({
      ...ctx.deps.config,
      PORT: 0,
      HOST: "127.0.0.1",
      EMAIL_POLL_INTERVAL_MS: 100,
      SHUTDOWN_GRACE_SECONDS: 1,
    });
    const server = createServer({ ...ctx.deps, config, close: async () => {} });
    await server.start();
    try {
      const started = Date.now();
      await notify(b, "ada", "night", Date.now());
      await sink.waitFor(() => sink.to(b.voters.ada!.email!).length === 1, 10_000);
      expect(Date.now() - started).toBeLessThan(30_000);
    } finally {
      await server.stop();
    }
  });

  it("end to end: an owner's status change reaches a subscriber's mailbox through the event, the consumer and the email worker", async () => {
    const b = await board({ digest_minutes: 0 });
    await ctx.db
      .insertInto("subscriptions")
      .values({ feature_id: b.features.export!, voter_id: b.voters.bob!.id, project_id: b.projectId, reason: "vote" })
      .execute();
    ctx.clock.release();
    const config = Object.freeze({
      ...ctx.deps.config,
      PORT: 0,
      HOST: "127.0.0.1",
      EMAIL_POLL_INTERVAL_MS: 100,
      SHUTDOWN_GRACE_SECONDS: 1,
    });
    const server = createServer({ ...ctx.deps, config, close: async () => {} });
    await server.start();
    try {
      const started = Date.now();
      const patched = await ctx.send("PATCH", `/api/v3/projects/${b.slug}/admin/features/${b.features.export}`, b.secretKey, {
        status: "in_progress",
      });
      expect(patched.status).toBe(200);
      await sink.waitFor(() => sink.to(b.voters.bob!.email!).length === 1, 30_000);
      expect(Date.now() - started).toBeLessThan(30_000);
      const [mail] = sink.to(b.voters.bob!.email!) as [ParsedMail];
      expect(mail.subject).toBe("[Lumen] CSV export");
      expect(mail.text).toContain("CSV export: status changed from Planned to In progress");
      expect(mail.text).not.toContain("in_progress");
      const [email] = (await emailLog(b)).data;
      expect(email?.notification_ids).toHaveLength(1);
      expect(email?.notification_ids[0]).toMatch(/^ntf_\d+$/);
    } finally {
      await server.stop();
    }
  });
});
