/**
 * Export -> `import --replace` is a restore (snapshot spec, "Restores"): after replacing a project
 * with its own export, the same keys and X-VF-Anon tokens work (the file's and those the API
 * minted), the same feature and comment ids answer, and every counter equals the export's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportSnapshot } from "../src/admin/snapshot-export.ts";
import { importSnapshot } from "../src/admin/snapshot-import.ts";
import { createTestContext, type Answer, body, type ImportedProject, type TestContext, uniqueSlug } from "./support/harness.ts";

let ctx: TestContext;
let project: ImportedProject;

beforeAll(async () => {
  ctx = await createTestContext();
  const slug = uniqueSlug("restore");
  project = await ctx.importProject({
    project: { slug },
    voters: [
      { ref: "ada", anon_token: `anon-ada-${slug}` },
      { ref: "bob", anon_token: `anon-bob-${slug}` },
    ],
    features: [
      { ref: "open", board: "roadmap", column: "c-open", heading: "Open" },
      { ref: "planned", board: "roadmap", column: "c-planned", heading: "Planned" },
    ],
  });
});
afterAll(() => ctx.close());

const base = () => `/api/v3/projects/${project.slug}`;
const feature = (ref: string): number => project.ids.ids.features[ref];

async function send(method: string, path: string, anon: string, body?: unknown) {
  const response = await ctx.send(method, `${base()}${path}`, project.secretKey, body, { "X-VF-Anon": anon });
  return { status: response.status, body: (await response.json()) as { data: { id: number } & Record<string, unknown> } };
}

/** What a restore must give back: the features with their counters, a feature's comments, a voter's identity. */
async function state(anon: string) {
  const features = await ctx.get(`${base()}/features?scope=project&sort=top&per_page=100`, project.secretKey);
  const comments = await ctx.get(`${base()}/features/${feature("open")}/comments?per_page=100`, project.embedKey);
  const identity = await send("POST", "/identity", anon);
  expect([features.status, comments.status, identity.status]).toEqual([200, 200, 200]);
  return {
    features: (await body<Answer<"/api/v3/projects/{slug}/features", "get">>(features)).data,
    comments: (await body<Answer<"/api/v3/projects/{slug}/features/{id}/comments", "get">>(comments)).data,
    identity: identity.body.data,
  };
}

describe("export -> import --replace", () => {
  it("restores ids, keys, anonymous tokens and counters, and the API answers as before", async () => {
    const ada = `anon-ada-${project.slug}`;
    // A voter the API minted (its token exists nowhere but in this test and as a digest).
    const minted = await ctx.send("POST", `${base()}/identity`, project.secretKey);
    expect(minted.status).toBe(201);
    const cy = (await minted.json()).data.anon_token as string;

    expect((await send("POST", `/features/${feature("open")}/vote`, ada)).status).toBe(200);
    expect((await send("POST", `/features/${feature("open")}/vote`, cy)).status).toBe(200);
    const comment = await send("POST", `/features/${feature("open")}/comments`, cy, { content: "Please" });
    expect(comment.status).toBe(201);
    expect((await send("POST", `/comments/${comment.body.data.id}/like`, ada)).status).toBe(200);

    const exported = JSON.parse(JSON.stringify(await exportSnapshot(ctx.db, project.slug)));
    const before = await state(cy);

    // Changes after the export are undone by the restore.
    expect((await send("POST", `/features/${feature("planned")}/vote`, cy)).status).toBe(200);
    expect((await send("DELETE", `/comments/${comment.body.data.id}`, cy)).status).toBe(200);

    await importSnapshot(ctx.db, exported, { replace: true });
    const after = await state(cy);
    expect(after).toEqual(before);
    expect(after.features.find((f) => f.id === feature("open"))).toMatchObject({ vote_count: 2 });
    expect(after.comments.map((c) => c.id)).toEqual([comment.body.data.id]);

    // The file's token, the minted one and both keys still work for writes.
    expect((await send("DELETE", `/features/${feature("open")}/vote`, ada)).status).toBe(200);
    expect((await send("POST", `/features/${feature("planned")}/vote`, cy)).status).toBe(200);
    const embedWrite = await ctx.send("POST", `${base()}/features/${feature("open")}/vote`, project.embedKey, undefined, {
      "X-VF-Anon": ada,
      Origin: "https://allowed.example",
    });
    expect(embedWrite.status).toBe(200);
  });
});
