/**
 * The board widget on two server processes that share one Postgres and one Redis
 * (docs/contract/clients-v3.md, "The board widget"; decisions.md, "Caching": a read that starts
 * after a write's answer arrived sees it, on every instance). A page on instance A's origin embeds
 * A's widget.js with `api` A, a page on B's origin embeds B's; a vote cast in A's widget shows as
 * one more vote in B's widget, both after refresh() and on a fresh page, though B keeps answers
 * for 600 s and had already read the board. Each page is served from its server's own origin
 * (page.route fulfils the HTML), and the project's allowed_origins list both origins
 * (src/middleware/cors.ts, docs/widget.md "Embedding").
 *
 * Needs /usr/bin/chromium (test/browser/support/chromium.ts).
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumAvailable, launchChromium } from "../browser/support/chromium.ts";
import type { ImportedProject } from "../support/harness.ts";
import { json, send } from "./support/http.ts";
import { idsOf } from "./support/seed.ts";
import { type ServerInstance, startServer } from "./support/server.ts";
import { type Stack, startStack } from "./support/stack.ts";

const available = chromiumAvailable("two-instance widget test");
const HEADING = "Export the board as CSV";

let stack: Stack;
let a: ServerInstance;
let b: ServerInstance;
let p: ImportedProject;
let browser: Browser;

beforeAll(async () => {
  if (!available) return;
  stack = await startStack({ env: { READ_CACHE_SECONDS: "600", PROJECT_CACHE_SECONDS: "600" } });
  a = stack.server;
  b = await startServer(stack.env);
  p = await stack.seeder.importProject({
    project: { allowed_origins: [a.origin, b.origin] },
    features: [
      { ref: "csv", board: "roadmap", column: "c-open", heading: HEADING },
      { ref: "other", board: "roadmap", column: "c-open", heading: "Keyboard shortcuts" },
    ],
  });
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await b?.stop();
  await stack?.close();
});

/** A page at `origin`/widget-page whose HTML embeds `origin`'s widget.js with `api` on `origin`. */
async function openWidget(origin: string): Promise<Page> {
  const page = await browser.newPage();
  page.setDefaultTimeout(30_000);
  const url = `${origin}/widget-page`;
  await page.route(url, (route) =>
    route.fulfill({
      status: 200,
      contentType: "text/html",
      body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Board</title>
<script type="module" src="${origin}/api/v3/widget.js"></script></head>
<body><feedback-board project="${p.slug}" key="${p.embedKey}" api="${origin}/api/v3"></feedback-board></body></html>`,
    }),
  );
  await page.goto(url, { waitUntil: "load" });
  await voteButton(page).waitFor();
  return page;
}

const voteButton = (page: Page) => page.locator("feedback-board").locator(`button.vote[aria-label^="Vote for ${HEADING}"]`);

/** The count the button shows (its aria-label ends in "N votes"). */
async function shownCount(page: Page): Promise<number> {
  const label = (await voteButton(page).getAttribute("aria-label")) ?? "";
  const match = /(\d+) votes?$/.exec(label);
  expect(match, label).not.toBeNull();
  return Number(match![1]);
}

describe.skipIf(!available)("the widget on two instances", () => {
  it("a vote in A's widget shows in B's widget after refresh() and on a fresh page", async () => {
    const onB = await openWidget(b.origin);
    const before = await shownCount(onB);

    const onA = await openWidget(a.origin);
    expect(await shownCount(onA)).toBe(before);
    const voted = onA.evaluate(
      () =>
        new Promise<{ feature_id: number; vote_count: number }>((resolve) =>
          document.addEventListener("feedback-board:vote", (event) => resolve((event as CustomEvent).detail), { once: true }),
        ),
    );
    await voteButton(onA).click();
    const detail = await voted;
    expect(detail.feature_id).toBe(idsOf(p).features.csv);
    expect(detail.vote_count).toBe(before + 1);
    await expect.poll(() => voteButton(onA).getAttribute("aria-pressed")).toBe("true");

    await onB.evaluate(() => (document.querySelector("feedback-board") as HTMLElement & { refresh(): void }).refresh());
    await expect.poll(() => shownCount(onB), { timeout: 15_000 }).toBe(before + 1);
    // B's page has its own origin, so its own anonymous voter: the vote is not its own.
    expect(await voteButton(onB).getAttribute("aria-pressed")).toBe("false");

    const fresh = await openWidget(b.origin);
    expect(await shownCount(fresh)).toBe(before + 1);

    // Through B's API, with the voter A's widget stored, the vote is that voter's.
    const anon = await onA.evaluate((slug) => localStorage.getItem(`feedback-board:${slug}:anon`), p.slug);
    expect(anon).toBeTruthy();
    const read = await send(b.origin, {
      path: `/api/v3/projects/${p.slug}/features/${detail.feature_id}`,
      headers: { "X-API-Key": p.secretKey, "X-VF-Anon": anon! },
    });
    expect(read.status, read.text).toBe(200);
    expect(json(read).data).toMatchObject({ has_voted: true, vote_count: before + 1 });
    for (const page of [onA, onB, fresh]) await page.close();
  }, 120_000);
});
