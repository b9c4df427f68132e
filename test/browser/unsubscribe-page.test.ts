/**
 * The unsubscribe link of a real email works for a person (engagement-api-v3.md, "Email
 * notifications", "Unsubscribe"): an email is sent through a real SMTP server on 127.0.0.1
 * (smtp-server + mailparser, test/support/smtp-sink.ts), its List-Unsubscribe link is opened in
 * Debian's chromium driven by playwright-core, the page shows the project's name (escaped), the
 * state and one button; pressing it shows that it is done, and the owner's voter route then
 * reads `email_unsubscribed: true`. The page runs under its own Content-Security-Policy with no
 * violation and loads nothing from anywhere else. Screenshots of both pages are written to
 * /tmp/unsubscribe-page-get.png and /tmp/unsubscribe-page-post.png.
 *
 * Needs /usr/bin/chromium (.ci/run installs it). Without it the file is skipped locally, with a
 * message; under CI=true it fails instead, so that CI never passes without running it.
 */
import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import type { ParsedMail } from "mailparser";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmailWorker } from "../../src/events/email/email-worker.ts";
import { type Answer, body, createTestContext, type TestContext } from "../support/harness.ts";
import { type SmtpSink, startSmtpSink } from "../support/smtp-sink.ts";
import { chromiumAvailable, launchChromium } from "./support/chromium.ts";

const available = chromiumAvailable("unsubscribe page browser test");

type VoterAnswer = Answer<"/api/v3/projects/{slug}/admin/voters/{voter_id}", "get">;

/** A project name with markup in it: the page must show it as text. */
const PROJECT_NAME = `Lumen <i>&</i> "Friends"`;

let ctx: TestContext;
let sink: SmtpSink;
let server: ServerType;
let base: string;
let browser: Browser;

beforeAll(async () => {
  if (!available) return;
  sink = await startSmtpSink();
  // The server listens first (the app is bound once made), so PUBLIC_BASE_URL, which the email's
  // link is built on, can be the address the browser opens.
  let app: TestContext["app"] | undefined;
  ({ server, base } = await new Promise<{ server: ServerType; base: string }>((resolve) => {
    const started = serve(
      { fetch: (request) => (app ? app.fetch(request) : new Response("starting", { status: 503 })), port: 0, hostname: "127.0.0.1" },
      (info: AddressInfo) => resolve({ server: started, base: `http://127.0.0.1:${info.port}` }),
    );
  }));
  ctx = await createTestContext({ SMTP_URL: sink.url, PUBLIC_BASE_URL: base });
  app = ctx.app;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  server?.close();
  await ctx?.close();
  await sink?.close();
});

/** Sends one status-change email to a new sso voter of a new project; returns what the owner and the mailbox see. */
async function receiveEmail() {
  const address = `ada-${Date.now()}@example.com`;
  const imported = await ctx.importProject({
    project: {
      name: PROJECT_NAME,
      notifications: { email_enabled: true, from_address: "updates@lumen.test", digest_minutes: 0 },
    },
    voters: [{ ref: "ada", kind: "sso", sso_id: `ada-${Date.now()}`, display_name: "Ada", email: address }],
    features: [{ ref: "export", board: "roadmap", column: "c-planned", heading: "CSV export" }],
  });
  const project = await ctx.db.selectFrom("projects").select("id").where("slug", "=", imported.slug).executeTakeFirstOrThrow();
  const voterId = (imported.ids.ids.voters as Record<string, string>).ada!;
  const voter = await ctx.db.selectFrom("voters").select("id").where("public_id", "=", voterId).executeTakeFirstOrThrow();
  const at = Date.now();
  await ctx.db
    .insertInto("notifications")
    .values({
      project_id: project.id,
      voter_id: voter.id,
      feature_id: imported.ids.ids.features.export!,
      event_seq: String(BigInt(at) * 1000n),
      type: "status_changed",
      data: { from: "planned", to: "in_progress" },
      created_at: new Date(at),
    })
    .execute();
  ctx.clock.pin(at + 1000);
  await new EmailWorker({ db: ctx.db, config: ctx.deps.config, logger: ctx.deps.logger }, { now: () => ctx.clock.now() }).runOnce();
  ctx.clock.release();
  await sink.waitFor(() => sink.to(address).length === 1, 10_000);
  const [mail] = sink.to(address) as [ParsedMail];
  return { imported, voterId, mail };
}

/** The List-Unsubscribe link of `mail`, as a mail client reads it. */
function unsubscribeLink(mail: ParsedMail): string {
  const line = mail.headerLines.find((header) => header.key === "list-unsubscribe");
  const match = line?.line.match(/<([^>]+)>/);
  expect(match, "List-Unsubscribe header").toBeTruthy();
  return match![1]!;
}

describe.skipIf(!available)("unsubscribe page in a browser", () => {
  it("opens the email's link, shows the state and one button, and unsubscribes on a press", async () => {
    const { imported, voterId, mail } = await receiveEmail();
    const link = unsubscribeLink(mail);
    expect(link.startsWith(`${base}/api/v3/unsubscribe/`)).toBe(true);
    // The text part shows the same link for clients that show no header.
    expect(mail.text).toContain(link);

    const page = await browser.newPage();
    const refused: string[] = [];
    await page.route("**/*", (route) => {
      const url = new URL(route.request().url());
      if (url.origin === base) return route.continue();
      refused.push(url.href);
      return route.abort("internetdisconnected");
    });
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error" || /Content Security Policy|Refused to/i.test(message.text())) problems.push(message.text());
    });

    const opened = await page.goto(link, { waitUntil: "load" });
    expect(opened?.status()).toBe(200);
    expect(opened?.headers()["content-type"]).toBe("text/html; charset=utf-8");
    expect(await page.title()).toBe(`Unsubscribe from ${PROJECT_NAME}`);
    expect(await page.locator("html").getAttribute("lang")).toBe("en");
    // The name is shown as text, markup and all; none of it became an element.
    await page.getByRole("heading", { level: 1, name: `Unsubscribe from ${PROJECT_NAME} emails` }).waitFor();
    expect(await page.locator("main i").count()).toBe(0);
    await page.getByText("You receive emails from").waitFor();
    const buttons = page.getByRole("button");
    expect(await buttons.count()).toBe(1);
    expect(await page.locator('form[method="post"]').count()).toBe(1);
    await page.screenshot({ path: "/tmp/unsubscribe-page-get.png", fullPage: true });
    // Opening the page changed nothing.
    const owner = () => ctx.get(`/api/v3/projects/${imported.slug}/admin/voters/${voterId}`, imported.secretKey);
    expect((await body<VoterAnswer>(await owner())).data.email_unsubscribed).toBe(false);

    const posted = page.waitForResponse((response) => response.request().method() === "POST", { timeout: 30_000 });
    await buttons.click();
    const answer = await posted;
    expect(answer.status()).toBe(200);
    expect(answer.url()).toBe(link);
    await page.waitForLoadState("load");
    await page.getByRole("heading", { level: 1, name: "You are unsubscribed" }).waitFor({ timeout: 30_000 });
    await page.getByRole("status").getByText(`Done: you will receive no more emails from ${PROJECT_NAME}.`).waitFor();
    expect(await page.title()).toBe(`Unsubscribed from ${PROJECT_NAME}`);
    expect(await page.getByRole("button").count()).toBe(0);
    await page.screenshot({ path: "/tmp/unsubscribe-page-post.png", fullPage: true });

    expect((await body<VoterAnswer>(await owner())).data.email_unsubscribed).toBe(true);
    expect(problems).toEqual([]);
    expect(refused).toEqual([]);
    await page.close();
  }, 120_000);
});
