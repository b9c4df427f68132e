/**
 * Owner content changes across two server processes on one Postgres and one Redis
 * (owner-api-v3.md, "Common rules": every change is visible to every public read that starts
 * after the owner's response arrived, on every instance; Rule 4: a scheduled release becomes
 * public by itself at its time). Both instances keep answers for 600 s (READ_CACHE_SECONDS and
 * PROJECT_CACHE_SECONDS), so only the revision and the publication time can retire them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ImportedProject } from "../support/harness.ts";
import { buildSnapshot } from "../support/harness.ts";
import { contentSnapshot } from "../support/owner-content.fixture.ts";
import { json, send } from "./support/http.ts";
import { idsOf } from "./support/seed.ts";
import { type ServerInstance, startServer } from "./support/server.ts";
import { type Stack, startStack } from "./support/stack.ts";

let stack: Stack;
let a: ServerInstance;
let b: ServerInstance;
let p: ImportedProject;

beforeAll(async () => {
  stack = await startStack({ env: { READ_CACHE_SECONDS: "600", PROJECT_CACHE_SECONDS: "600" } });
  a = stack.server;
  b = await startServer(stack.env);
  const { extraBoards, ...parts } = contentSnapshot();
  p = await stack.seeder.importProject({ ...parts, boards: [...buildSnapshot().boards, ...extraBoards] });
}, 180_000);
afterAll(async () => {
  await b?.stop();
  await stack?.close();
});

async function call(server: ServerInstance, method: string, path: string, payload?: unknown) {
  const result = await send(server.origin, {
    method,
    path: `/api/v3/projects/${p.slug}${path}`,
    headers: { "X-API-Key": p.secretKey, ...(payload === undefined ? {} : { "Content-Type": "application/json" }) },
    body: payload === undefined ? undefined : JSON.stringify(payload),
  });
  return { status: result.status, body: json(result) };
}

async function read(server: ServerInstance, path = "") {
  const result = await call(server, "GET", path);
  expect(result.status, JSON.stringify(result.body)).toBe(200);
  return result.body.data;
}

describe("owner changes through instance A are seen by instance B's very next read", () => {
  it("a published release, a message, a renamed column and a deleted tag", async () => {
    const ids = idsOf(p);
    const dark = ids.features.dark;
    // B caches every answer the changes will touch.
    expect(await read(b, "/changelog")).toEqual([]);
    expect((await read(b, `/features/${dark}`)).release).toBeNull();
    expect((await read(b, "/messages")).map((m: any) => m.title)).toEqual([]);
    const doc = await read(b);
    expect(doc.tags.map((t: any) => t.name)).toContain("UI");
    expect((await read(b, `/features?tag=${ids.tags["t-ui"]}`)).length).toBe(2);

    const release = await call(a, "POST", "/admin/releases", {
      name: "2.0",
      published_at: new Date(Date.now() - 1000).toISOString(),
      features: [{ feature_id: dark, changelog_type: "new" }],
    });
    expect(release.status).toBe(201);
    expect((await read(b, "/changelog")).map((r: any) => r.name)).toEqual(["2.0"]);
    expect((await read(b, `/features/${dark}`)).release).toEqual({ id: release.body.data.id, name: "2.0" });

    expect((await call(a, "POST", "/admin/messages", { title: "Hello", body: "From A" })).status).toBe(201);
    expect((await read(b, "/messages")).map((m: any) => m.title)).toEqual(["Hello"]);

    const planned = ids.columns["c-planned"];
    expect((await call(a, "PATCH", `/admin/columns/${planned}`, { name: "Next up" })).status).toBe(200);
    const roadmap = (await read(b)).boards.find((x: any) => x.kind === "roadmap");
    expect(roadmap.columns.find((c: any) => c.id === planned).name).toBe("Next up");
    expect((await read(b, `/features/${dark}`)).column.name).toBe("Next up");

    expect((await call(a, "DELETE", `/admin/tags/${ids.tags["t-ui"]}`)).status).toBe(200);
    expect((await read(b)).tags.map((t: any) => t.name)).not.toContain("UI");
    expect(await read(b, `/features?tag=${ids.tags["t-ui"]}`)).toEqual([]);
  });

  it("a scheduled release becomes public on B at its time with no request in between", async () => {
    const widget = idsOf(p).features.widget;
    const due = Date.now() + 4000;
    const made = await call(a, "POST", "/admin/releases", {
      name: "Scheduled",
      published_at: new Date(due).toISOString(),
      features: [{ feature_id: widget, changelog_type: "fix" }],
    });
    expect(made.body.data.status).toBe("scheduled");
    // Cached on both instances before the time (the write above retired the older answers).
    for (const server of [a, b]) {
      expect((await read(server, "/changelog")).map((r: any) => r.name)).toEqual(["2.0"]);
      expect((await read(server, `/features/${widget}`)).release).toBeNull();
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now()) + 50));
    for (const server of [b, a]) {
      expect((await read(server, "/changelog")).map((r: any) => r.name)).toEqual(["Scheduled", "2.0"]);
      const feature = await read(server, `/features/${widget}`);
      expect(feature.release).toEqual({ id: made.body.data.id, name: "Scheduled" });
      expect(feature.changelog_type).toBe("fix");
    }
  });
});
