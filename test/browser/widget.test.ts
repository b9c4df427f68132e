/**
 * The board widget as a person uses it (docs/contract/clients-v3.md, "The board widget" and
 * "The demo page"): Debian's chromium, driven by playwright-core, opens /demo on a real server on
 * 127.0.0.1 (the demo snapshot under a fresh slug, its origin allowed as src/server.ts does) with
 * every request to another host refused, and every flow is read back through the API. The list
 * controls (search, tag filter, "Show more") and theme="auto" run on a seeded project of 25
 * features, on a page served from the same origin.
 *
 * UPDATE_SCREENSHOTS=1 writes docs/images/widget-light.png and widget-dark.png (docs/widget.md).
 *
 * Needs /usr/bin/chromium. Without it the file is skipped locally, with a message; under CI=true
 * it fails instead.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { SignJWT } from "jose";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allowDemoOrigins } from "../../src/admin/demo-bootstrap.ts";
import { importSnapshot } from "../../src/admin/snapshot-import.ts";
import { body, createTestContext, demoSnapshotForTest, type ImportedProject, type TestContext } from "../support/harness.ts";
import { chromiumAvailable, launchChromium } from "./support/chromium.ts";

const available = chromiumAvailable("widget browser test");
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const IMAGES = new URL("../../docs/images/", import.meta.url);

let ctx: TestContext;
let server: ServerType;
let base: string;
let browser: Browser;
let demo: ReturnType<typeof demoSnapshotForTest>;
let hostile: ImportedProject;
let listed: ImportedProject;
/**
 * A project with a discussion: the `ME` voter's three comments on one feature, 25 others' on
 * another; and 12 releases (more than the changelog's page of 10).
 */
let discussed: ImportedProject;
const ME = `anon-me-widget-focus-${Date.now()}`;
const LONG_THREAD = 25;
const RELEASES = 12;
/** Features of `listed`: two headings with "calendar", two tagged Interface, 25 in all (more than a page of 20). */
const LISTED_FEATURES = [
  { ref: "cal1", heading: "Calendar sync", tags: [] as string[] },
  { ref: "cal2", heading: "Export to a calendar", tags: [] },
  { ref: "ui1", heading: "Compact layout", tags: ["t-ui"] },
  { ref: "ui2", heading: "Larger fonts", tags: ["t-ui"] },
  ...Array.from({ length: 21 }, (_, i) => ({ ref: `n${i}`, heading: `Numbered idea ${i + 1}`, tags: [] })),
];

beforeAll(async () => {
  if (!available) return;
  ctx = await createTestContext();
  demo = demoSnapshotForTest();
  await importSnapshot(ctx.db, demo.snapshot, {});
  ({ server, base } = await new Promise<{ server: ServerType; base: string }>((resolve) => {
    const started = serve({ fetch: ctx.app.fetch, port: 0, hostname: "127.0.0.1" }, (info: AddressInfo) => {
      resolve({ server: started, base: `http://127.0.0.1:${info.port}` });
    });
  }));
  await allowDemoOrigins(ctx.db, demo.slug, [base], ctx.deps.caches);
  ctx.deps.demo = { slug: demo.slug, embedKey: demo.embedKey };
  // A project whose texts try to run script: markup in a heading, raw HTML and a javascript: link in a release.
  hostile = await ctx.importProject({
    project: { allowed_origins: [base] },
    features: [
      {
        ref: "x",
        board: "roadmap",
        column: "c-open",
        heading: '<img src=x onerror="window.__xss=1"><b>Bold</b> heading',
        description: "<script>window.__xss=2</script>",
        position: 0,
      },
    ],
    releases: [
      {
        ref: "r",
        name: "Risky release",
        slug: "risky",
        body: '## News\n\n<img src=x onerror="window.__xss=3">\n\n[click](javascript:window.__xss=4)',
        published_at: "2026-01-01T00:00:00Z",
        features: [],
      },
    ],
  });
  listed = await ctx.importProject({
    project: { allowed_origins: [base] },
    tags: [{ ref: "t-ui", name: "Interface" }],
    features: LISTED_FEATURES.map(({ ref, heading, tags }) => ({ ref, board: "roadmap", column: "c-open", heading, tags })),
  });
  discussed = await ctx.importProject({
    project: { allowed_origins: [base] },
    voters: [
      { ref: "me", kind: "anonymous", anon_token: ME },
      { ref: "other", kind: "anonymous", anon_token: null },
    ],
    features: [
      { ref: "talk", board: "roadmap", column: "c-open", heading: "Talked about" },
      { ref: "long", board: "roadmap", column: "c-open", heading: "Long thread" },
    ],
    comments: [
      ...["First", "Second", "Third"].map((word, i) => ({
        ref: `mine${i}`,
        feature: "talk",
        voter: "me",
        content: `${word} comment`,
        created_at: `2026-01-0${i + 1}T00:00:00Z`,
      })),
      ...Array.from({ length: LONG_THREAD }, (_, i) => ({
        ref: `long${i}`,
        feature: "long",
        voter: "other",
        content: `Thread comment ${i + 1}`,
        created_at: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
      })),
    ],
    releases: Array.from({ length: RELEASES }, (_, i) => ({
      ref: `rel${i}`,
      name: `Release ${i + 1}`,
      slug: `release-${i + 1}`,
      body: `Notes of release ${i + 1}.`,
      published_at: new Date(Date.UTC(2026, 0, i + 1)).toISOString(),
      features: [],
    })),
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  server?.close();
  await ctx?.close();
});

interface Watched {
  page: Page;
  refused: string[];
  pageErrors: string[];
  cspViolations: string[];
  requests: string[];
}

/** A page that refuses every host but 127.0.0.1 and records errors, CSP reports and requests. */
async function openPage(colorScheme: "light" | "dark" = "light"): Promise<Watched> {
  const page = await browser.newPage({ colorScheme, viewport: { width: 900, height: 1000 } });
  const watched: Watched = { page, refused: [], pageErrors: [], cspViolations: [], requests: [] };
  await page.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === "127.0.0.1") {
      watched.requests.push(`${route.request().method()} ${url.pathname}${url.search}`);
      return route.continue();
    }
    watched.refused.push(url.href);
    return route.abort("internetdisconnected");
  });
  page.on("pageerror", (error) => watched.pageErrors.push(error.message));
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) watched.cspViolations.push(message.text());
  });
  return watched;
}

const board = (page: Page) => page.locator("feedback-board");

/**
 * What has focus inside the widget's shadow root, or null when focus is outside it (fallen to the
 * page's body): tag, id, class, text, aria-disabled, aria-expanded and, inside the feature view's
 * comments, the text of the comment it belongs to.
 */
function activeInWidget(page: Page) {
  return page.evaluate(() => {
    const inner = document.querySelector("feedback-board")?.shadowRoot?.activeElement as HTMLElement | null | undefined;
    if (!inner) return null;
    const comment = inner.closest('[aria-labelledby="fb-comments"] li');
    return {
      tag: inner.tagName.toLowerCase(),
      id: inner.id,
      className: inner.className,
      text: inner.textContent?.trim() ?? "",
      ariaDisabled: inner.getAttribute("aria-disabled"),
      expanded: inner.getAttribute("aria-expanded"),
      comment: comment?.querySelector(":scope > p.text")?.textContent ?? null,
    };
  });
}
type Active = Awaited<ReturnType<typeof activeInWidget>>;

/** Presses Tab until `until` holds for the focused element (at most `limit` times), and asserts it does. */
async function tabTo(page: Page, until: (active: Active) => boolean, limit = 120): Promise<void> {
  for (let i = 0; i < limit && !until(await activeInWidget(page)); i++) await page.keyboard.press("Tab");
  expect(until(await activeInWidget(page)), `Tab reached the control, last focused: ${JSON.stringify(await activeInWidget(page))}`).toBe(
    true,
  );
}

/**
 * A page at `base`/embed-page embedding the widget on `project` with `attributes` added, the
 * voter's anonymous token `anon` stored beforehand when given; resolves once the project's name
 * is drawn.
 */
async function openEmbedded(
  project: ImportedProject,
  { attributes = "", colorScheme = "light", anon }: { attributes?: string; colorScheme?: "light" | "dark"; anon?: string } = {},
): Promise<Watched> {
  const watched = await openPage(colorScheme);
  const url = `${base}/embed-page`;
  if (anon)
    await watched.page.addInitScript(([slug, token]) => localStorage.setItem(`feedback-board:${slug}:anon`, token!), [project.slug, anon]);
  await watched.page.route(url, (route) =>
    route.fulfill({
      status: 200,
      contentType: "text/html",
      body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Embed</title>
<script type="module" src="${base}/api/v3/widget.js"></script></head>
<body><feedback-board project="${project.slug}" key="${project.embedKey}" ${attributes}></feedback-board></body></html>`,
    }),
  );
  await watched.page.goto(url, { waitUntil: "load" });
  await board(watched.page).locator("h2").waitFor({ timeout: 30_000 });
  return watched;
}
const voteButtons = (page: Page) => board(page).locator("button.vote");

async function openDemo(colorScheme: "light" | "dark" = "light"): Promise<Watched> {
  const watched = await openPage(colorScheme);
  const response = await watched.page.goto(`${base}/demo`, { waitUntil: "load" });
  expect(response?.status()).toBe(200);
  await voteButtons(watched.page).first().waitFor({ timeout: 30_000 });
  return watched;
}

/** The anonymous token the widget keeps for the demo project. */
const storedAnon = (page: Page) => page.evaluate((slug) => localStorage.getItem(`feedback-board:${slug}:anon`), demo.slug);

/** axe-core on the page: the violations of impact serious or critical. */
async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE);
  return page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(context: unknown, options: unknown): Promise<{ violations: { id: string; impact: string; nodes: { target: unknown }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations
      .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
      .map((violation) => `${violation.id}: ${JSON.stringify(violation.nodes.map((node) => node.target))}`);
  });
}

describe.skipIf(!available)("the board widget in a browser", () => {
  it("draws the demo board from this origin only, under the page's CSP, without errors", async () => {
    const { page, refused, pageErrors, cspViolations, requests } = await openDemo();
    await board(page).getByRole("heading", { name: demo.snapshot.project.name, level: 2 }).waitFor();
    const tabs = board(page).getByRole("tab");
    expect(await tabs.count()).toBe(demo.snapshot.boards!.length);
    expect(await tabs.first().getAttribute("aria-selected")).toBe("true");
    expect(await voteButtons(page).count()).toBeGreaterThan(0);
    expect(await board(page).locator("ul.list > li").count()).toBe(20);
    expect(requests.some((request) => request.startsWith("GET /api/v3/widget.js?v="))).toBe(true);
    expect(refused).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(cspViolations).toEqual([]);
    await page.close();
  }, 120_000);

  it("casts a vote that the API reads back, and a reload keeps the voter and the vote", async () => {
    const { page } = await openDemo();
    const button = voteButtons(page).first();
    expect(await button.getAttribute("aria-pressed")).toBe("false");
    const label = (await button.getAttribute("aria-label"))!;
    const before = Number(/(\d+) votes?$/.exec(label)?.[1]);
    const voted = page.evaluate(
      () =>
        new Promise((resolve) =>
          document.addEventListener("feedback-board:vote", (event) => resolve((event as CustomEvent).detail), { once: true }),
        ),
    );
    await button.click();
    const detail = (await voted) as { feature_id: number; has_voted: boolean; vote_count: number };
    expect(detail.has_voted).toBe(true);
    expect(detail.vote_count).toBe(before + 1);
    await expect.poll(() => button.getAttribute("aria-pressed")).toBe("true");
    const anon = await storedAnon(page);
    expect(anon).toBeTruthy();

    const read = await ctx.get(`/api/v3/projects/${demo.slug}/features/${detail.feature_id}`, demo.embedKey, { "X-VF-Anon": anon! });
    const feature = (await body(read)).data;
    expect(feature.has_voted).toBe(true);
    expect(feature.vote_count).toBe(before + 1);

    await page.reload({ waitUntil: "load" });
    await voteButtons(page).first().waitFor();
    expect(await storedAnon(page)).toBe(anon);
    const again = board(page).locator(`button.vote[aria-pressed=true]`);
    await again.first().waitFor({ timeout: 15_000 });
    expect(await board(page).locator("[aria-live=polite]").count()).toBe(1);
    await page.close();
  }, 120_000);

  it("puts the old count back when the API refuses a vote", async () => {
    const { page } = await openDemo();
    await page.route("**/vote", (route) =>
      route.fulfill({
        status: 403,
        contentType: "application/json",
        body: JSON.stringify({ data: null, meta: null, error: { code: "not_allowed", field: null, message: "voting is closed here" } }),
      }),
    );
    const button = voteButtons(page).nth(1);
    const label = await button.getAttribute("aria-label");
    await button.click();
    await board(page).getByText("voting is closed here").waitFor();
    expect(await button.getAttribute("aria-pressed")).toBe("false");
    expect(await button.getAttribute("aria-label")).toBe(label);
    await page.close();
  }, 120_000);

  it("refuses a secret key before sending any request, with an error in the element", async () => {
    const { page, requests } = await openDemo();
    const before = requests.length;
    await page.evaluate((slug) => {
      const element = document.createElement("feedback-board");
      element.id = "secret";
      element.setAttribute("project", slug);
      element.setAttribute("key", "fb_sk_demo_lumen_secret_key_0001");
      document.body.append(element);
    }, demo.slug);
    await page.locator("#secret").getByRole("alert").waitFor();
    expect(await page.locator("#secret").getByRole("alert").textContent()).toContain("secret key");
    await page.waitForTimeout(300);
    expect(requests.slice(before)).toEqual([]);
    await page.close();
  }, 120_000);

  it("shows markup in a heading as text and keeps a release body inert", async () => {
    const { page, pageErrors } = await openDemo();
    await page.evaluate(
      ({ slug, key }) => {
        const element = document.querySelector("feedback-board")!;
        element.setAttribute("project", slug);
        element.setAttribute("key", key);
      },
      { slug: hostile.slug, key: hostile.embedKey },
    );
    const title = board(page).locator("button.title", { hasText: "Bold" });
    await title.waitFor();
    expect(await title.textContent()).toBe('<img src=x onerror="window.__xss=1"><b>Bold</b> heading');
    expect(await board(page).locator("b, img").count()).toBe(0);
    await title.click();
    await board(page).getByText("<script>window.__xss=2</script>").waitFor();
    await board(page).getByRole("button", { name: "Changelog" }).click();
    await board(page).getByRole("heading", { name: "Risky release" }).waitFor();
    const link = board(page).locator(".release .html a");
    if ((await link.count()) > 0) await link.first().click();
    await page.waitForTimeout(300);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 120_000);

  it("is not reached by the page's CSS", async () => {
    const { page } = await openDemo();
    const vote = voteButtons(page).first();
    const styleOf = () => vote.evaluate((element) => getComputedStyle(element).backgroundColor + getComputedStyle(element).fontSize);
    const before = await styleOf();
    await page.addStyleTag({ content: "button{background:rgb(255,0,0)!important;font-size:40px!important} .vote{display:none!important}" });
    expect(await styleOf()).toBe(before);
    expect(await vote.isVisible()).toBe(true);
    await page.close();
  }, 120_000);

  it("is usable by keyboard alone: tabs with arrow keys, a vote with the space bar", async () => {
    const { page } = await openDemo();
    const focusedRole = () =>
      page.evaluate(() => {
        const inner = document.querySelector("feedback-board")?.shadowRoot?.activeElement;
        return inner ? `${inner.getAttribute("role") ?? inner.tagName.toLowerCase()}|${inner.className}` : "";
      });
    for (let i = 0; i < 30 && !(await focusedRole()).startsWith("tab|"); i++) await page.keyboard.press("Tab");
    expect(await focusedRole()).toMatch(/^tab\|/);
    await page.keyboard.press("ArrowRight");
    const tabs = board(page).getByRole("tab");
    await expect.poll(() => tabs.nth(1).getAttribute("aria-selected")).toBe("true");
    expect(await focusedRole()).toMatch(/^tab\|/);
    await page.keyboard.press("ArrowLeft");
    await expect.poll(() => tabs.first().getAttribute("aria-selected")).toBe("true");
    await voteButtons(page).first().waitFor();
    for (let i = 0; i < 30 && !(await focusedRole()).includes("vote"); i++) await page.keyboard.press("Tab");
    const pressedBefore = await page.evaluate(
      () => document.querySelector("feedback-board")?.shadowRoot?.activeElement?.getAttribute("aria-pressed") ?? "",
    );
    await page.keyboard.press("Space");
    await expect
      .poll(() => page.evaluate(() => document.querySelector("feedback-board")?.shadowRoot?.activeElement?.getAttribute("aria-pressed")))
      .toBe(pressedBefore === "true" ? "false" : "true");
    await page.close();
  }, 120_000);

  it("moves focus with the view, by keyboard alone: heading of an opened feature, back to its opener, suggestion form, notice", async () => {
    const { page } = await openDemo();
    /** The element focused inside the widget's shadow root: tag, id, class, tabindex and text. */
    const focused = () =>
      page.evaluate(() => {
        const inner = document.querySelector("feedback-board")?.shadowRoot?.activeElement as HTMLElement | null | undefined;
        if (!inner) return null;
        return {
          tag: inner.tagName.toLowerCase(),
          id: inner.id,
          className: inner.className,
          tabindex: inner.getAttribute("tabindex"),
          text: inner.textContent?.trim() ?? "",
          inFeatureView: inner.closest("article.feature") !== null,
          rowVotable: inner.closest("li")?.querySelector("button.vote") != null,
        };
      });
    const press = async (key: string, until: (f: Awaited<ReturnType<typeof focused>>) => boolean, limit = 60) => {
      for (let i = 0; i < limit && !until(await focused()); i++) await page.keyboard.press(key);
      expect(until(await focused())).toBe(true);
    };
    // The third votable feature's title, reached with Tab; kept on window to compare identity later.
    for (let titles = 0, i = 0; titles < 3 && i < 60; i++) {
      await page.keyboard.press("Tab");
      const now = await focused();
      if (now?.className === "title" && now.rowVotable) titles++;
    }
    expect(await focused()).toMatchObject({ tag: "button", className: "title" });
    const opened = (await focused())!.text;
    await page.evaluate(() => {
      (window as unknown as { opener: Element | null }).opener = document.querySelector("feedback-board")!.shadowRoot!.activeElement;
    });
    await page.keyboard.press("Enter");
    await expect.poll(focused).toMatchObject({ tag: "h3", tabindex: "-1", text: opened, inFeatureView: true });

    // A vote in the feature view (Shift+Tab from the heading reaches its vote control) ...
    await page.keyboard.press("Shift+Tab");
    expect(await focused()).toMatchObject({ className: "vote", inFeatureView: true });
    await page.keyboard.press("Space");
    await expect
      .poll(async () => (await board(page).locator("article.feature button.vote").getAttribute("aria-pressed")) ?? "")
      .toBe("true");
    // ... then back: focus is on the very title button that opened the feature, whose row shows the vote.
    await press("Shift+Tab", (f) => f?.text.includes("Back to the list") === true, 5);
    await page.keyboard.press("Enter");
    await expect.poll(focused).toMatchObject({ className: "title", text: opened });
    const state = await page.evaluate(() => {
      const opener = (window as unknown as { opener: HTMLElement }).opener;
      return {
        same: document.querySelector("feedback-board")!.shadowRoot!.activeElement === opener,
        pressed: opener.closest("li")?.querySelector("button.vote")?.getAttribute("aria-pressed"),
      };
    });
    expect(state).toEqual({ same: true, pressed: "true" });

    // The suggestion form: its first field takes focus; after submitting, the notice does.
    await press("Shift+Tab", (f) => f?.text === "Suggest a feature");
    await page.keyboard.press("Enter");
    await expect.poll(focused).toMatchObject({ tag: "input", id: "fb-heading" });
    await page.keyboard.type(`Focus test suggestion ${Date.now()}`);
    await page.keyboard.press("Tab");
    expect(await focused()).toMatchObject({ tag: "textarea", id: "fb-description" });
    await page.keyboard.type("Typed with the keyboard only.");
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Enter");
    await expect.poll(focused, { timeout: 15_000 }).toMatchObject({ tag: "p", className: "notice", tabindex: "-1" });
    expect((await focused())!.text).toContain("awaits review");
    await page.close();
  }, 120_000);

  it("opens view=feature:{id} set by the page without taking focus from the page", async () => {
    const { page } = await openDemo();
    const id = (await body(await ctx.get(`/api/v3/projects/${demo.slug}/features?per_page=1`, demo.embedKey))).data[0].id as number;
    await page.evaluate(() => {
      const input = document.createElement("input");
      input.id = "page-field";
      document.body.prepend(input);
      input.focus();
    });
    await page.evaluate((feature) => document.querySelector("feedback-board")!.setAttribute("view", `feature:${feature}`), id);
    await board(page).locator("article.feature h3").waitFor();
    await page.waitForTimeout(200);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("page-field");
    await page.close();
  }, 120_000);

  it("suggests a feature with similar ones listed, and comments on it; the API reads both back", async () => {
    const { page } = await openDemo();
    await board(page).getByRole("button", { name: "Suggest a feature" }).click();
    const existing = demo.snapshot.features![0]!.heading;
    await board(page).getByLabel("Title").fill(existing);
    await board(page).getByRole("heading", { name: "Is it one of these?" }).waitFor({ timeout: 15_000 });
    await board(page).getByLabel("Title").fill("Widget test suggestion about keyboard shortcuts");
    await board(page).getByLabel("Description").fill("Written by the browser test.");
    const suggested = page.evaluate(
      () =>
        new Promise((resolve) =>
          document.addEventListener("feedback-board:suggest", (event) => resolve((event as CustomEvent).detail), { once: true }),
        ),
    );
    await board(page).getByRole("button", { name: "Submit" }).click();
    const { feature } = (await suggested) as { feature: { id: number; is_approved: boolean } };
    expect(feature.is_approved).toBe(false);
    await board(page).getByText("awaits review").waitFor();
    const anon = (await storedAnon(page))!;
    const read = await ctx.get(`/api/v3/projects/${demo.slug}/features/${feature.id}`, demo.embedKey, { "X-VF-Anon": anon });
    expect(read.status).toBe(200);

    // A comment on the first feature of the list.
    await board(page).getByRole("button", { name: "Features" }).click();
    await board(page).locator("button.title").first().click();
    await board(page).getByLabel("Write a comment").fill("A comment from the widget test");
    const commented = page.evaluate(
      () =>
        new Promise((resolve) =>
          document.addEventListener("feedback-board:comment", (event) => resolve((event as CustomEvent).detail), { once: true }),
        ),
    );
    await board(page).getByRole("button", { name: "Send" }).click();
    await board(page).getByText("A comment from the widget test").waitFor();
    const { comment } = (await commented) as { comment: { feature_id: number } };
    const comments = await ctx.get(`/api/v3/projects/${demo.slug}/features/${comment.feature_id}/comments`, demo.embedKey, {
      "X-VF-Anon": anon,
    });
    const mine = (await body(comments)).data.find((c: { content: string }) => c.content === "A comment from the widget test");
    expect(mine.is_own).toBe(true);
    await page.close();
  }, 180_000);

  it("replies, likes and deletes its own comment, read back through the API; the bell opens", async () => {
    const { page } = await openDemo();
    await board(page).locator("button.title").nth(2).click();
    const text = `Top-level comment ${Date.now()}`;
    await board(page).getByLabel("Write a comment").fill(text);
    const commented = page.evaluate(
      () =>
        new Promise((resolve) =>
          document.addEventListener("feedback-board:comment", (event) => resolve((event as CustomEvent).detail), { once: true }),
        ),
    );
    await board(page).getByRole("button", { name: "Send" }).click();
    const featureId = ((await commented) as { comment: { feature_id: number } }).comment.feature_id;
    const item = board(page).locator("ul.comments > li", { hasText: text });
    await item.waitFor();
    await item.getByRole("button", { name: "Reply" }).click();
    await item.getByLabel("Write a reply").fill("A reply from the widget test");
    await item.getByRole("button", { name: "Send" }).click();
    const reply = item.locator("ul.replies > li", { hasText: "A reply from the widget test" });
    await reply.waitFor();
    const actions = item.locator(":scope > .actions");
    await actions.getByRole("button", { name: /^Like, 0 likes$/ }).click();
    await actions.getByRole("button", { name: /^Like, 1 like$/ }).waitFor();
    expect(await actions.getByRole("button", { name: /^Like, 1 like$/ }).getAttribute("aria-pressed")).toBe("true");
    await reply.getByRole("button", { name: "Delete" }).click();
    await reply.waitFor({ state: "detached" });

    const anon = (await storedAnon(page))!;
    const comments = (
      await body(await ctx.get(`/api/v3/projects/${demo.slug}/features/${featureId}/comments`, demo.embedKey, { "X-VF-Anon": anon }))
    ).data;
    const mine = comments.find((comment: { content: string }) => comment.content === text);
    expect(mine).toMatchObject({ is_own: true, has_liked: true, like_count: 1, replies: [] });

    const bell = board(page).getByRole("button", { name: /Notifications/ });
    await bell.click();
    expect(await bell.getAttribute("aria-expanded")).toBe("true");
    await board(page).locator("#fb-notifications").waitFor();
    await page.close();
  }, 180_000);

  it("speaks German with locale=de, and a page rule on the element overrides --fb-accent", async () => {
    const { page } = await openDemo();
    await page.evaluate(() => document.querySelector("feedback-board")!.setAttribute("locale", "de"));
    await board(page).getByRole("button", { name: "Funktion vorschlagen" }).waitFor();
    await board(page).getByLabel("Suchen").waitFor();
    await page.addStyleTag({ content: "feedback-board{--fb-accent:rgb(1, 2, 3)}" });
    const selected = board(page).locator("[role=tab][aria-selected=true]");
    expect(await selected.evaluate((element) => getComputedStyle(element).borderBottomColor)).toBe("rgb(1, 2, 3)");
    await page.close();
  }, 120_000);

  it("identify() sends the SSO token as X-VF-Token and votes as that user; refresh() reloads", async () => {
    const { page, requests } = await openDemo();
    const token = await new SignJWT({ name: "Widget Tester" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(`widget-user-${Date.now()}`)
      .setExpirationTime("10m")
      .sign(new TextEncoder().encode(demo.snapshot.project.sso_secret!));
    const headers: string[] = [];
    page.on("request", (request) => {
      const sent = request.headers()["x-vf-token"];
      if (sent) headers.push(sent);
    });
    await page.evaluate(
      (sso) => (document.querySelector("feedback-board") as HTMLElement & { identify(t: string | null): void }).identify(sso),
      token,
    );
    await expect.poll(() => headers.length).toBeGreaterThan(0);
    const before = requests.filter((request) => request === `GET /api/v3/projects/${demo.slug}`).length;
    await page.evaluate(() => (document.querySelector("feedback-board") as HTMLElement & { refresh(): void }).refresh());
    await expect.poll(() => requests.filter((request) => request === `GET /api/v3/projects/${demo.slug}`).length).toBe(before + 1);
    const button = board(page).locator("button.vote[aria-pressed=false]").first();
    const voted = page.evaluate(
      () =>
        new Promise((resolve) =>
          document.addEventListener("feedback-board:vote", (event) => resolve((event as CustomEvent).detail), { once: true }),
        ),
    );
    await button.click();
    const { feature_id } = (await voted) as { feature_id: number };
    expect(headers.every((sent) => sent === token)).toBe(true);
    expect(requests.filter((request) => request.endsWith("/identity"))).toEqual([]);
    const read = await ctx.get(`/api/v3/projects/${demo.slug}/features/${feature_id}`, demo.embedKey, { "X-VF-Token": token });
    expect((await body(read)).data.has_voted).toBe(true);
    await page.close();
  }, 120_000);

  it("opens view=feature:{id}, waits Retry-After on a 429 read, and shows a refusal in place with an error event", async () => {
    const { page } = await openDemo();
    const id = (await body(await ctx.get(`/api/v3/projects/${demo.slug}/features?per_page=1`, demo.embedKey))).data[0].id as number;
    let limited = 0;
    const asked: number[] = [];
    await page.route(`**/features/${id}/comments?*`, (route) => {
      asked.push(Date.now());
      if (limited++ > 0) return route.continue();
      return route.fulfill({
        status: 429,
        headers: { "Retry-After": "1", "Content-Type": "application/json" },
        body: JSON.stringify({ data: null, meta: null, error: { code: "rate_limited", field: null, message: "slow down" } }),
      });
    });
    await page.route(`**/features/${id}/comments`, (route) =>
      route.request().method() === "POST"
        ? route.fulfill({
            status: 403,
            contentType: "application/json",
            body: JSON.stringify({
              data: null,
              meta: null,
              error: { code: "voter_banned", field: null, message: "this voter may not comment" },
            }),
          })
        : route.continue(),
    );
    await page.evaluate((feature) => document.querySelector("feedback-board")!.setAttribute("view", `feature:${feature}`), id);
    await board(page).locator("article.feature h3").waitFor();
    await board(page).locator("ul.comments > li").first().waitFor({ timeout: 15_000 });
    expect(asked).toHaveLength(2);
    expect(asked[1]! - asked[0]!).toBeGreaterThanOrEqual(900);

    const failed = page.evaluate(
      () =>
        new Promise((resolve) =>
          document.addEventListener("feedback-board:error", (event) => resolve((event as CustomEvent).detail), { once: true }),
        ),
    );
    await board(page).getByLabel("Write a comment").fill("Refused comment");
    await board(page).getByRole("button", { name: "Send" }).click();
    expect(await failed).toEqual({ code: "voter_banned", message: "this voter may not comment", status: 403 });
    await board(page).locator("form").getByRole("alert").filter({ hasText: "this voter may not comment" }).waitFor();
    await page.close();
  }, 120_000);

  for (const palette of ["light", "dark"] as const) {
    it(`has no serious or critical axe violation on the board, feature, suggestion and changelog views (${palette})`, async () => {
      const { page } = await openDemo(palette);
      await page.evaluate((theme) => document.querySelector("feedback-board")!.setAttribute("theme", theme), palette);
      if (process.env.UPDATE_SCREENSHOTS === "1") mkdirSync(IMAGES, { recursive: true });
      const found: Record<string, string[]> = {};
      found.board = await seriousViolations(page);
      if (process.env.UPDATE_SCREENSHOTS === "1") {
        const box = (await board(page).boundingBox())!;
        await page.screenshot({
          path: new URL(`widget-${palette}.png`, IMAGES).pathname,
          clip: { x: box.x, y: box.y, width: box.width, height: 560 },
        });
      }
      await board(page).locator("button.title").first().click();
      await board(page).locator("article.feature h3").waitFor();
      found.feature = await seriousViolations(page);
      await board(page).getByRole("button", { name: "Suggest a feature" }).click();
      await board(page).getByLabel("Title").fill(demo.snapshot.features![1]!.heading);
      await board(page).getByRole("heading", { name: "Is it one of these?" }).waitFor({ timeout: 15_000 });
      found.suggestion = await seriousViolations(page);
      await board(page).getByRole("button", { name: "Changelog" }).click();
      await board(page).locator("article.release").first().waitFor();
      found.changelog = await seriousViolations(page);
      expect(found).toEqual({ board: [], feature: [], suggestion: [], changelog: [] });
      await page.close();
    }, 180_000);
  }
});

describe.skipIf(!available)("the widget's list controls and theme", () => {
  /** The widget on `listed` with `attributes` added, once its first vote control is drawn. */
  async function openListed(attributes = "", colorScheme: "light" | "dark" = "light"): Promise<Watched> {
    const watched = await openEmbedded(listed, { attributes, colorScheme });
    await voteButtons(watched.page).first().waitFor({ timeout: 30_000 });
    return watched;
  }

  const headings = (page: Page) => board(page).locator("ul.list > li h3").allTextContents();

  it("search narrows the list to matching headings after the debounce, and clearing it brings them back", async () => {
    const { page, pageErrors } = await openListed();
    expect(await headings(page)).toHaveLength(20);
    await board(page).getByLabel("Search").fill("calendar");
    await expect.poll(async () => (await headings(page)).sort(), { timeout: 10_000 }).toEqual(["Calendar sync", "Export to a calendar"]);
    await board(page).getByLabel("Search").fill("");
    await expect.poll(async () => (await headings(page)).length, { timeout: 10_000 }).toBe(20);
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 60_000);

  it("the tag filter lists only the features with that tag, and All tags lists all again", async () => {
    const { page, pageErrors } = await openListed();
    const select = board(page).getByLabel("Tag");
    expect(await select.locator("option").allTextContents()).toEqual(["All tags", "Interface"]);
    await select.selectOption({ label: "Interface" });
    await expect.poll(async () => (await headings(page)).sort(), { timeout: 10_000 }).toEqual(["Compact layout", "Larger fonts"]);
    expect(await board(page).locator("ul.list > li .tag").allTextContents()).toEqual(["Interface", "Interface"]);
    await select.selectOption({ label: "All tags" });
    await expect.poll(async () => (await headings(page)).length, { timeout: 10_000 }).toBe(20);
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 60_000);

  it('"Show more" appends the second page of 20 and disappears when there is no more', async () => {
    const { page, requests } = await openListed();
    const more = board(page).getByRole("button", { name: "Show more" });
    expect(await headings(page)).toHaveLength(20);
    await more.click();
    await expect.poll(async () => (await headings(page)).length, { timeout: 10_000 }).toBe(LISTED_FEATURES.length);
    const all = await headings(page);
    expect(new Set(all).size).toBe(LISTED_FEATURES.length);
    expect(all.sort()).toEqual(LISTED_FEATURES.map((feature) => feature.heading).sort());
    expect(await more.count()).toBe(0);
    expect(requests.some((request) => /\/features\?.*page=2/.test(request) && /per_page=20/.test(request))).toBe(true);
    await page.close();
  }, 60_000);

  it('"Show more" by keyboard keeps focus: the button stays, busy, while the page loads; then the first new feature has it', async () => {
    const { page, requests } = await openListed();
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The second page is held back, so that the loading state can be read.
    await page.route(
      (url) => url.pathname.endsWith("/features") && url.searchParams.get("page") === "2",
      async (route) => {
        await held;
        await route.fallback();
      },
    );
    await tabTo(page, (active) => active?.text === "Show more");
    await page.keyboard.press("Enter");
    await expect
      .poll(() => activeInWidget(page))
      .toMatchObject({ tag: "button", className: "more", text: "Loading more…", ariaDisabled: "true" });
    expect(await board(page).locator("ul.list").getAttribute("aria-busy")).toBe("true");
    // Pressed again while busy: no second request.
    await page.keyboard.press("Enter");
    release();
    await expect.poll(async () => (await headings(page)).length, { timeout: 10_000 }).toBe(LISTED_FEATURES.length);
    const twentyFirst = (await headings(page))[20];
    await expect.poll(() => activeInWidget(page)).toMatchObject({ tag: "button", className: "title", text: twentyFirst });
    expect(requests.filter((request) => /\/features\?(.*&)?page=2(&|$)/.test(request))).toHaveLength(1);
    await page.close();
  }, 60_000);

  it('theme="auto" follows prefers-color-scheme, also when it changes on an open page', async () => {
    const { page } = await openListed('theme="auto"', "dark");
    const background = () =>
      page.evaluate(() => getComputedStyle(document.querySelector("feedback-board")!).getPropertyValue("--fb-background").trim());
    const scheme = () => page.evaluate(() => getComputedStyle(document.querySelector("feedback-board")!).colorScheme);
    // The palettes as the explicit attribute gives them, read on the same element at the end.
    await expect.poll(scheme).toBe("dark");
    const autoDark = await background();
    await page.emulateMedia({ colorScheme: "light" });
    await expect.poll(scheme).toBe("light");
    const autoLight = await background();
    await page.evaluate(() => document.querySelector("feedback-board")!.setAttribute("theme", "dark"));
    await expect.poll(scheme).toBe("dark");
    expect(await background()).toBe(autoDark);
    await page.evaluate(() => document.querySelector("feedback-board")!.setAttribute("theme", "light"));
    await expect.poll(scheme).toBe("light");
    expect(await background()).toBe(autoLight);
    expect(autoDark).not.toBe(autoLight);
    await page.close();
  }, 60_000);
});

describe.skipIf(!available)("the widget keeps focus inside when the focused control goes away (keyboard only)", () => {
  const featureId = async (heading: string) =>
    (await body(await ctx.get(`/api/v3/projects/${discussed.slug}/features?q=${encodeURIComponent(heading)}`, discussed.embedKey))).data[0]
      .id as number;

  it("a reply and deletions of one's own comments move focus to the new reply, the next, the previous, the heading", async () => {
    const id = await featureId("Talked about");
    const { page, pageErrors } = await openEmbedded(discussed, { attributes: `view="feature:${id}"`, anon: ME });
    await board(page).locator("ul.comments > li").nth(2).waitFor({ timeout: 15_000 });
    const onButton = (name: string, comment: string) => (active: Active) => active?.text === name && active.comment === comment;
    const onComment = (comment: string) => ({ tag: "li", comment });

    // A reply to the newest comment: the form closes, the new reply has focus.
    await tabTo(page, onButton("Reply", "Third comment"));
    await page.keyboard.press("Enter");
    await tabTo(page, (active) => active?.tag === "textarea" && active.comment === "Third comment");
    await page.keyboard.type("A reply typed with the keyboard");
    await page.keyboard.press("Tab");
    expect(await activeInWidget(page)).toMatchObject({ tag: "button", text: "Send" });
    await page.keyboard.press("Enter");
    await expect.poll(() => activeInWidget(page), { timeout: 10_000 }).toMatchObject(onComment("A reply typed with the keyboard"));
    // Deleting that only reply: focus goes to the comment it answered.
    await tabTo(page, onButton("Delete", "A reply typed with the keyboard"));
    await page.keyboard.press("Enter");
    await expect.poll(() => activeInWidget(page), { timeout: 10_000 }).toMatchObject(onComment("Third comment"));

    // The middle comment: the next one takes focus; the last: the previous one; the only one: the heading.
    await tabTo(page, onButton("Delete", "Second comment"));
    await page.keyboard.press("Enter");
    await expect.poll(() => activeInWidget(page), { timeout: 10_000 }).toMatchObject(onComment("First comment"));
    await tabTo(page, onButton("Delete", "First comment"));
    await page.keyboard.press("Enter");
    await expect.poll(() => activeInWidget(page), { timeout: 10_000 }).toMatchObject(onComment("Third comment"));
    await tabTo(page, onButton("Delete", "Third comment"));
    await page.keyboard.press("Enter");
    await expect
      .poll(() => activeInWidget(page), { timeout: 10_000 })
      .toMatchObject({ tag: "h4", id: "fb-comments", text: "Comments (0)" });

    const left = await body(
      await ctx.get(`/api/v3/projects/${discussed.slug}/features/${id}/comments`, discussed.embedKey, { "X-VF-Anon": ME }),
    );
    expect(left.data).toEqual([]);
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 120_000);

  it('the comments\' "Show more" stays, busy, while loading, then the first new comment has focus', async () => {
    const id = await featureId("Long thread");
    const { page } = await openEmbedded(discussed, { attributes: `view="feature:${id}"` });
    await board(page).locator("ul.comments > li").nth(19).waitFor({ timeout: 15_000 });
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(
      (url) => url.pathname.endsWith(`/features/${id}/comments`) && url.searchParams.get("page") === "2",
      async (route) => {
        await held;
        await route.fallback();
      },
    );
    await tabTo(page, (active) => active?.text === "Show more");
    await page.keyboard.press("Enter");
    await expect.poll(() => activeInWidget(page)).toMatchObject({ className: "more", text: "Loading more…", ariaDisabled: "true" });
    release();
    await expect.poll(() => board(page).locator("ul.comments > li").count(), { timeout: 10_000 }).toBe(LONG_THREAD);
    // Newest first: the 21st shown is the fifth written.
    await expect.poll(() => activeInWidget(page)).toMatchObject({ tag: "li", comment: "Thread comment 5" });
    expect(await board(page).getByRole("button", { name: "Show more" }).count()).toBe(0);
    await page.close();
  }, 120_000);

  it("the changelog's \"Show more\" stays, busy, while loading, then the first new release's name has focus", async () => {
    const { page } = await openEmbedded(discussed);
    await tabTo(page, (active) => active?.text === "Changelog");
    await page.keyboard.press("Enter");
    await board(page).locator("article.release").nth(9).waitFor({ timeout: 15_000 });
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(
      (url) => url.pathname.endsWith("/changelog") && url.searchParams.get("page") === "2",
      async (route) => {
        await held;
        await route.fallback();
      },
    );
    await tabTo(page, (active) => active?.text === "Show more");
    await page.keyboard.press("Enter");
    await expect.poll(() => activeInWidget(page)).toMatchObject({ className: "more", text: "Loading more…", ariaDisabled: "true" });
    release();
    await expect.poll(() => board(page).locator("article.release").count(), { timeout: 10_000 }).toBe(RELEASES);
    const eleventh = await board(page).locator("article.release h3").nth(10).textContent();
    await expect.poll(() => activeInWidget(page)).toMatchObject({ tag: "h3", text: eleventh });
    expect(await board(page).getByRole("button", { name: "Show more" }).count()).toBe(0);
    await page.close();
  }, 120_000);

  it("a refused comment keeps focus on Send, with the message in place", async () => {
    const id = await featureId("Talked about");
    const { page } = await openEmbedded(discussed, { attributes: `view="feature:${id}"`, anon: ME });
    await page.route(`**/features/${id}/comments`, (route) =>
      route.request().method() === "POST"
        ? route.fulfill({
            status: 403,
            contentType: "application/json",
            body: JSON.stringify({
              data: null,
              meta: null,
              error: { code: "voter_banned", field: null, message: "this voter may not comment" },
            }),
          })
        : route.fallback(),
    );
    await tabTo(page, (active) => active?.tag === "textarea" && active.id === "fb-comment-top");
    await page.keyboard.type("Refused comment");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await board(page).getByRole("alert").filter({ hasText: "this voter may not comment" }).waitFor();
    expect(await activeInWidget(page)).toMatchObject({ tag: "button", text: "Send" });
    await page.close();
  }, 120_000);

  it("the bell's panel: Escape closes it and returns focus to the bell; Mark all read leaves focus on the bell", async () => {
    const { page } = await openEmbedded(discussed, { anon: ME });
    // Two unread notifications and the mark-all answer, as engagement-api-v3.md shapes them.
    let unread = 2;
    const notification = (n: number) => ({
      id: `ntf_${n}`,
      type: "status_changed",
      feature: { id: n, heading: `Notified feature ${n}`, slug: `notified-${n}` },
      data: { from: "open", to: "planned" },
      read: unread === 0,
      created_at: "2026-01-01T00:00:00Z",
    });
    await page.route(
      (url) => url.pathname.endsWith("/notifications"),
      (route) => {
        const list =
          new URL(route.request().url()).searchParams.get("unread") === "true" && unread === 0 ? [] : [notification(1), notification(2)];
        return route.fulfill({
          status: 200,
          contentType: "application/json",
          body: JSON.stringify({ data: list, meta: { page: 1, per_page: 20, total: list.length, has_more: false }, error: null }),
        });
      },
    );
    await page.route(
      (url) => url.pathname.endsWith("/notifications/read"),
      (route) => {
        unread = 0;
        return route.fulfill({
          status: 200,
          contentType: "application/json",
          body: JSON.stringify({ data: { updated: 2 }, meta: null, error: null }),
        });
      },
    );
    await page.evaluate(() => (document.querySelector("feedback-board") as HTMLElement & { refresh(): void }).refresh());
    const bell = board(page).locator("button.bell");
    await expect.poll(() => bell.locator(".badge").textContent()).toBe("2");
    const onBell = (active: Active) => active?.className === "bell";

    await tabTo(page, onBell);
    await page.keyboard.press("Enter");
    await board(page).locator("#fb-notifications").waitFor();
    await tabTo(page, (active) => active?.text.includes("Notified feature 1") === true, 5);
    await page.keyboard.press("Escape");
    await expect.poll(() => activeInWidget(page)).toMatchObject({ className: "bell", expanded: "false" });
    expect(await board(page).locator("#fb-notifications").count()).toBe(0);

    await page.keyboard.press("Enter");
    await tabTo(page, (active) => active?.text === "Mark all read", 5);
    await page.keyboard.press("Enter");
    await expect.poll(() => bell.locator(".badge").textContent()).toBe("0");
    await expect.poll(() => activeInWidget(page)).toMatchObject({ className: "bell", expanded: "true" });
    await page.close();
  }, 120_000);
});
