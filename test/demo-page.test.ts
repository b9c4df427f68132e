/**
 * GET /demo (docs/contract/clients-v3.md, "The demo page"): the page embedding the widget on the
 * demo project with its embed key while the process serves the demo (AppDeps.demo, set by
 * src/server.ts), 404 otherwise; and the demo's allowed_origins taking the server's own origin
 * (src/admin/demo-bootstrap.ts), without which the widget's writes from /demo are refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allowDemoOrigins, serverOrigins } from "../src/admin/demo-bootstrap.ts";
import { importSnapshot } from "../src/admin/snapshot-import.ts";
import { body, createTestContext, demoSnapshotForTest, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
let demo: ReturnType<typeof demoSnapshotForTest>;

beforeAll(async () => {
  ctx = await createTestContext();
  demo = demoSnapshotForTest();
  await importSnapshot(ctx.db, demo.snapshot, {});
});
afterAll(() => ctx.close());

describe("GET /demo", () => {
  it("answers 404 when the process serves no demo", async () => {
    ctx.deps.demo = undefined;
    const response = await ctx.app.request("/demo");
    expect(response.status).toBe(404);
    expect((await body(response)).error.code).toBe("not_found");
  });

  it("answers 404 when the demo project is not in the database", async () => {
    ctx.deps.demo = { slug: "no-such-demo", embedKey: demo.embedKey };
    expect((await ctx.app.request("/demo")).status).toBe(404);
  });

  it("embeds the widget on the demo project with its embed key, under a strict CSP", async () => {
    ctx.deps.demo = { slug: demo.slug, embedKey: demo.embedKey };
    const response = await ctx.app.request("/demo");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/^text\/html/);
    expect(response.headers.get("Content-Security-Policy")).toContain("script-src 'self'");
    const html = await response.text();
    expect(html).toContain(`<feedback-board project="${demo.slug}" key="${demo.embedKey}"></feedback-board>`);
    const version = (await ctx.app.request("/api/v3/widget.js")).headers.get("X-Widget-Version");
    expect(html).toContain(`<script type="module" src="/api/v3/widget.js?v=${version}"></script>`);
    expect(html).not.toMatch(/<script>|<script type="text\/javascript">/);
  });
});

describe("the demo's allowed origins", () => {
  it("names 127.0.0.1 and localhost on a loopback HOST, the host otherwise, and PUBLIC_BASE_URL", () => {
    expect(serverOrigins({ HOST: "127.0.0.1" }, 8080)).toEqual(["http://127.0.0.1:8080", "http://localhost:8080"]);
    expect(serverOrigins({ HOST: "0.0.0.0", PUBLIC_BASE_URL: "https://board.example/x" }, 8080)).toEqual(["https://board.example"]);
    expect(serverOrigins({ HOST: "10.0.0.5" }, 9000)).toEqual(["http://10.0.0.5:9000"]);
  });

  it("takes the server's origin, so that a write from /demo is accepted; adding again changes nothing", async () => {
    const identity = () =>
      ctx.app.request(`/api/v3/projects/${demo.slug}/identity`, {
        method: "POST",
        headers: { "X-API-Key": demo.embedKey, Origin: "http://127.0.0.1:8080", "Content-Type": "application/json" },
        body: "{}",
      });
    const refused = await identity();
    expect(refused.status).toBe(403);
    expect((await body(refused)).error.code).toBe("origin_not_allowed");

    const origins = serverOrigins({ HOST: "127.0.0.1" }, 8080);
    expect(await allowDemoOrigins(ctx.db, demo.slug, origins, ctx.deps.caches)).toEqual(origins);
    expect(await allowDemoOrigins(ctx.db, demo.slug, origins, ctx.deps.caches)).toEqual([]);
    const project = await ctx.db.selectFrom("projects").select("allowed_origins").where("slug", "=", demo.slug).executeTakeFirstOrThrow();
    expect(project.allowed_origins).toEqual([...demo.snapshot.project.allowed_origins!, ...origins]);

    const accepted = await identity();
    expect(accepted.status).toBe(201);
    expect(accepted.headers.get("Access-Control-Allow-Origin")).toBe("http://127.0.0.1:8080");
  });
});
