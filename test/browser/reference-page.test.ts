/**
 * The reference page (/api/v3/docs/reference) works with no internet (docs/decisions.md,
 * "Reference page offline"):
 * Debian's chromium, driven by playwright-core, loads it from the app on a loopback port with
 * every request to another host refused, and the page shows the API's title and operations,
 * with no page error and no Content-Security-Policy violation.
 *
 * Needs /usr/bin/chromium (.ci/run installs it). Without it the file is skipped locally, with a
 * message; under CI=true it fails instead, so that CI never passes without running it.
 */
import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../support/harness.ts";
import { chromiumAvailable, launchChromium } from "./support/chromium.ts";

const available = chromiumAvailable("reference page browser test");

let ctx: TestContext;
let server: ServerType;
let base: string;
let browser: Browser;
// Generous bounds: the machine's two cores are shared, and parsing the 3.5 MB bundle then the
// description took 20-30 s in a slow browser under load (a few seconds when idle). They bound
// a hang; nothing here measures speed.

beforeAll(async () => {
  if (!available) return;
  ctx = await createTestContext();
  ({ server, base } = await new Promise<{ server: ServerType; base: string }>((resolve) => {
    const started = serve({ fetch: ctx.app.fetch, port: 0, hostname: "127.0.0.1" }, (info: AddressInfo) => {
      resolve({ server: started, base: `http://127.0.0.1:${info.port}` });
    });
  }));
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  server?.close();
  await ctx?.close();
});

describe.skipIf(!available)("reference page in a browser", () => {
  it("shows the API title and its operations with every other host unreachable", async () => {
    const page = await browser.newPage();
    const refused: string[] = [];
    const loaded: string[] = [];
    await page.route("**/*", (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === "127.0.0.1") {
        loaded.push(url.pathname);
        return route.continue();
      }
      refused.push(url.href);
      return route.abort("internetdisconnected");
    });
    const pageErrors: string[] = [];
    const cspViolations: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("console", (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) cspViolations.push(message.text());
    });

    const response = await page.goto(`${base}/api/v3/docs`, { waitUntil: "load" });
    expect(response?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe("/api/v3/docs/reference");

    // The title and operation summaries come from the served OpenAPI description: the page ran.
    await page.getByRole("heading", { name: "Feedback Board API" }).first().waitFor({ timeout: 90_000 });
    await page.getByText("Health probe", { exact: true }).first().waitFor();
    // The Features group of the sidebar opens on a click and lists its operations.
    await page.getByText("Features", { exact: true }).first().click();
    for (const operation of ["List features", "Suggest a feature"]) {
      await page.getByText(operation, { exact: true }).first().waitFor({ timeout: 30_000 });
    }

    expect(pageErrors).toEqual([]);
    expect(cspViolations).toEqual([]);
    // Everything came from the app itself: the pinned bundle and the description.
    // (The redirect to /docs/reference is followed inside the request to /docs.)
    expect(loaded).toEqual(
      expect.arrayContaining(["/api/v3/docs", expect.stringMatching(/^\/api\/v3\/docs\/scalar-[\d.]+\.js$/), "/api/v3/openapi.json"]),
    );
    expect(refused).toEqual([]);
    await page.close();
  }, 180_000);

  it("sends try-it requests to the address the page was loaded from, and shows the answer", async () => {
    const page = await browser.newPage();
    await page.route("**/*", (route) =>
      new URL(route.request().url()).hostname === "127.0.0.1" ? route.continue() : route.abort("internetdisconnected"),
    );
    const cspViolations: string[] = [];
    const failed: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy|Refused to|Failed to fetch/i.test(message.text())) cspViolations.push(message.text());
    });
    page.on("requestfailed", (request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`));

    // Opened at 127.0.0.1, while the description's default server is http://localhost:8080.
    await page.goto(`${base}/api/v3/docs`, { waitUntil: "load" });
    await page.getByText("Health probe", { exact: true }).first().waitFor({ timeout: 90_000 });
    await page
      .getByRole("button", { name: /Test Request.*\(get \/api\/v3\/health\)/ })
      .first()
      .click();
    const send = page.getByRole("button", { name: /^Send/ }).first();
    await send.waitFor({ timeout: 30_000 });
    const answered = page.waitForResponse((response) => response.url() === `${base}/api/v3/health`, { timeout: 30_000 });
    await send.click();
    const response = await answered;
    expect(response.status()).toBe(200);
    // The client shows the answer: its status and the HealthObject.
    await page.getByText("200 OK").first().waitFor({ timeout: 30_000 });
    await page.getByText('"version": "3"').first().waitFor({ timeout: 30_000 });
    expect(cspViolations).toEqual([]);
    expect(failed).toEqual([]);
    await page.close();
  }, 180_000);
});
