/**
 * First start on the embedded default (docs/operations.md, "First start and the
 * demo database"): the real server process on an empty
 * PGlite directory with DEMO=auto, as `npm start` on a fresh clone runs it. It prints its
 * progress, serves the demo board (from the prepared demo database) within a generous bound,
 * and answers every curl example of README.md and docs/*.md, not docs/contract/ (each ```sh
 * block with curl, run by bash as pasted, in file order, every answer 2xx:
 * test/resilience/support/readme.ts); a second start on the same directory opens the database as
 * it is. The measured seconds and memory are printed for the report. Chromium opens /demo on that
 * process (docs/contract/clients-v3.md, "The demo page") and casts a vote the API reads back.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEMO_SECRET_KEY, DEMO_SLUG } from "../../src/admin/demo.ts";
import { chromiumAvailable, launchChromium } from "../browser/support/chromium.ts";
import { json, resetAgents, send } from "./support/http.ts";
import { trackTempDir } from "./support/processes.ts";
import { readmeCurlBlocks, runBlock } from "./support/readme.ts";
import { type ServerInstance, startServer } from "./support/server.ts";

const root = new URL("../..", import.meta.url).pathname;

/** README.md, then docs/*.md in name order (the contract copies in docs/contract/ are not examples). */
function documentationFiles(): string[] {
  const docs = readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md"));
  return ["README.md", ...docs.sort().map((name) => `docs/${name}`)];
}

const dir = mkdtempSync(join(tmpdir(), "fb-first-start-"));
trackTempDir(dir);
// The webhook examples (docs/webhooks.md) use a local receiver, which needs WEBHOOK_ALLOW_PRIVATE_URLS (they say so).
const env = { DEMO: "auto", PGLITE_DIR: join(dir, "data"), WEBHOOK_ALLOW_PRIVATE_URLS: "true" };
const headers = { "X-API-Key": DEMO_SECRET_KEY };
const api = `/api/v3/projects/${DEMO_SLUG}`;
let server: ServerInstance | undefined;

afterAll(async () => {
  await server?.stop();
});

/** Resident memory of a process in MB: now (VmRSS) and its peak (VmHWM). */
function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mb = (field: string) => Math.round(Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0) / 1024);
  return { rssMb: mb("VmRSS"), peakMb: mb("VmHWM") };
}

/** `patterns` each match a line of `text`, in this order. */
function expectLinesInOrder(text: string, patterns: RegExp[]): void {
  const lines = text.split("\n");
  let from = 0;
  for (const pattern of patterns) {
    const at = lines.findIndex((line, i) => i >= from && pattern.test(line));
    expect(at, `no line matching ${pattern} after line ${from} in:\n${text}`).toBeGreaterThan(-1);
    from = at + 1;
  }
}

describe("first start on an empty embedded database", () => {
  it("prints its progress and serves the demo board and the README examples", async () => {
    const started = performance.now();
    server = await startServer(env);
    const first = await send(server.origin, { path: `${api}/features?sort=top&per_page=5`, headers });
    const servedMs = performance.now() - started;
    expect(first.status).toBe(200);
    expect(json(first).data).toHaveLength(5);
    // Progress lines go to stderr, the banner to stdout: each stream in its own order.
    expectLinesInOrder(server.output(), [
      /^database: creating the embedded database in .* from the prepared demo database\.\.\.$/,
      /^database: applying migrations\.\.\.$/,
      /^demo: demo project "lumen" came with the database \(\d+ features, 400 voters, [\d,]+ votes, /,
      /^ready in \d+\.\d s: http:\/\/127\.0\.0\.1:\d+\/api\/v3$/,
    ]);
    expectLinesInOrder(server.output(), [/^Demo board loaded: project "lumen"$/, new RegExp(`^  secret key: ${DEMO_SECRET_KEY}$`)]);
    // Generous: the target is 10 s on an idle 2-core machine; a loaded one is several times slower.
    expect(servedMs).toBeLessThan(60_000);
    const memory = memoryOf(server.child.pid!);
    console.log(
      `first start: demo served ${(servedMs / 1000).toFixed(1)} s after spawn; server RSS ${memory.rssMb} MB, peak ${memory.peakMb} MB`,
    );

    // README curl tour: the filtered example finds the mobile board's dark-mode sync idea.
    const filtered = await send(server.origin, { path: `${api}/features?board=mobile&tag=2&q=dark`, headers });
    expect(filtered.status).toBe(200);
    expect(json(filtered).data.map((feature: { heading: string }) => feature.heading)).toEqual([
      "Sync the dark mode setting between devices",
    ]);
    for (const path of ["", "/features/1/comments", "/changelog", "/messages?platform=ios&app_version=2.4.0", "/revenue/features"]) {
      const response = await send(server.origin, { path: `${api}${path}`, headers });
      expect(response.status, path).toBe(200);
    }
  });

  it.skipIf(!chromiumAvailable("first-start demo page test"))(
    "serves /demo, where a vote in the browser is read back through the API",
    async () => {
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        page.setDefaultTimeout(60_000);
        const response = await page.goto(`${server!.origin}/demo`, { waitUntil: "load" });
        expect(response?.status()).toBe(200);
        // Playwright locators pierce the element's open shadow root.
        const button = page.locator("feedback-board").locator("button.vote[aria-pressed]").first();
        await button.waitFor();
        expect(await button.getAttribute("aria-pressed")).toBe("false");
        const shown = async () => Number(await button.locator("span").nth(1).textContent());
        const before = await shown();
        const voted = page.evaluate(
          () =>
            new Promise<{ feature_id: number }>((resolve) =>
              document.addEventListener("feedback-board:vote", (event) => resolve((event as CustomEvent).detail), { once: true }),
            ),
        );
        await button.click();
        const { feature_id } = await voted;
        await expect.poll(() => button.getAttribute("aria-pressed"), { timeout: 10_000 }).toBe("true");
        expect(await shown()).toBe(before + 1);

        const anon = await page.evaluate((slug) => localStorage.getItem(`feedback-board:${slug}:anon`), DEMO_SLUG);
        expect(anon).toBeTruthy();
        const read = await send(server!.origin, { path: `${api}/features/${feature_id}`, headers: { ...headers, "X-VF-Anon": anon! } });
        expect(read.status).toBe(200);
        expect(json(read).data.has_voted).toBe(true);
        expect(json(read).data.vote_count).toBe(before + 1);
      } finally {
        await browser.close();
      }
    },
    120_000,
  );

  it("runs every curl example of the README and docs/ as pasted, each answered 2xx", () => {
    const files = documentationFiles();
    const blocks = files.flatMap((file) => readmeCurlBlocks(join(root, file)).map((block) => ({ file, block })));
    // The tour and taking part (README), the owner's guide, events, webhooks, billing set-up, health.
    expect(blocks.filter(({ file }) => file === "README.md").length).toBeGreaterThanOrEqual(2);
    for (const file of ["docs/owners-guide.md", "docs/webhooks.md", "docs/billing.md", "docs/operations.md"]) {
      expect(
        blocks.some((found) => found.file === file),
        file,
      ).toBe(true);
    }
    for (const { file, block } of blocks) {
      const result = runBlock(block, server!.origin);
      expect(result.status, `${file} block at line ${block.line}:\n${result.output.slice(-2000)}`).toBe(0);
    }
    // The blocks ran synchronously: kept-alive sockets the server closed meanwhile are stale.
    resetAgents();
  });

  it("a second start opens the same database as it is, without loading the demo again", async () => {
    // A vote cast now must still be there after the restart (the prepared database is not reloaded).
    const identity = await send(server!.origin, { method: "POST", path: `${api}/identity`, headers });
    expect(identity.status).toBe(201);
    const voter = { ...headers, "X-VF-Anon": json(identity).data.anon_token as string };
    const vote = await send(server!.origin, { method: "POST", path: `${api}/features/1/vote`, headers: voter });
    expect(vote.status).toBe(200);
    const before = json(await send(server!.origin, { path: `${api}/features/1`, headers })).data.vote_count as number;
    await server!.stop();
    server = await startServer(env);
    const output = server.output();
    expectLinesInOrder(output, [/^database: opening the embedded database in /, /^database: applying migrations\.\.\.$/, /^ready in /]);
    expect(output).not.toMatch(/Demo board loaded|demo: /);
    const after = await send(server.origin, { path: `${api}/features/1`, headers });
    expect(after.status).toBe(200);
    expect(json(after).data.vote_count).toBe(before);
    const again = await send(server.origin, { method: "POST", path: `${api}/features/1/vote`, headers: voter });
    expect(json(again).error?.code).toBe("already_exists");
  });
});
