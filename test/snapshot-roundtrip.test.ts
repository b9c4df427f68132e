/**
 * Import/export round trip (snapshot spec, "Commands"): exporting an imported project and
 * importing that export under another slug gives identical API output on every read route,
 * once database ids (which a new import assigns afresh) are set aside. The original holds a
 * merged feature when exported, and the copy's merge unmerges as the original's does (spec,
 * "Webhooks, merges and engagement").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportSnapshot, portableSnapshot } from "../src/admin/snapshot-export.ts";
import { importSnapshot } from "../src/admin/snapshot-import.ts";
import { type Answer, body, createTestContext, demoSnapshotForTest, randomKey, type TestContext, uniqueSlug } from "./support/harness.ts";

type FeatureList = Answer<"/api/v3/projects/{slug}/features", "get">;
/** An answer of any read the round trip compares: a list, or one document (no length). */
type AnyAnswer = { data: { length?: number } };

let ctx: TestContext;
const original = { slug: "", key: "" };
const copy = { slug: uniqueSlug("copy"), key: randomKey("sk") };

beforeAll(async () => {
  ctx = await createTestContext();
  const demo = demoSnapshotForTest();
  original.slug = demo.slug;
  original.key = demo.secretKey;
  await importSnapshot(ctx.db, demo.snapshot, {});
  // Merge the third most voted feature into the second: voters of both and of one only.
  const top = (await body<FeatureList>(await ctx.get(`/api/v3/projects/${original.slug}/features?sort=top&per_page=3`, original.key))).data;
  const merged = await ctx.send("POST", `/api/v3/projects/${original.slug}/admin/features/${top[2]!.id}/merge`, original.key, {
    into_id: top[1]!.id,
  });
  expect(merged.status).toBe(200);
  // A copy next to the original: without the restore fields (ids, key and token digests).
  const exported = portableSnapshot(await exportSnapshot(ctx.db, original.slug));
  await importSnapshot(
    ctx.db,
    { ...exported, project: { ...exported.project, slug: copy.slug }, keys: [{ kind: "secret", key: copy.key }] },
    {},
  );
});
afterAll(() => ctx.close());

/**
 * Blanks every id-valued field (a new import assigns ids afresh; the archived column's -1 and
 * the roadmap's 0 stay) and the project slug, so two imports of one project compare equal.
 */
function withoutIds(value: unknown): unknown {
  const walk = (node: unknown, key?: string): unknown => {
    if (Array.isArray(node)) return node.map((item) => walk(item, key));
    if (key === "voter_id" && typeof node === "string") return "#voter";
    if (node && typeof node === "object") return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, k)]));
    if (key !== undefined && (key === "id" || key.endsWith("_id") || key.endsWith("_ids")) && typeof node === "number" && node > 0) {
      return "#id";
    }
    if (key === "slug" && (node === original.slug || node === copy.slug)) return "<project>";
    return node;
  };
  return walk(value);
}

/** Both projects' answers at `path`, ids blanked (read as `T`: the shape, with markers for ids). */
async function readBoth<T = AnyAnswer>(path: (slug: string) => string): Promise<[T, T]> {
  const a = await ctx.get(path(original.slug), original.key);
  const b = await ctx.get(path(copy.slug), copy.key);
  expect(a.status).toBe(200);
  expect(b.status).toBe(200);
  return [withoutIds(await body<unknown>(a)) as T, withoutIds(await body<unknown>(b)) as T];
}

describe("snapshot round trip", () => {
  it.each([
    ["board document", (s: string) => `/api/v3/projects/${s}`],
    ["features by top", (s: string) => `/api/v3/projects/${s}/features?sort=top&per_page=100`],
    ["features by trending", (s: string) => `/api/v3/projects/${s}/features?sort=trending&scope=project&per_page=100`],
    ["features by board order", (s: string) => `/api/v3/projects/${s}/features?sort=board&per_page=100`],
    ["features by comments", (s: string) => `/api/v3/projects/${s}/features?sort=comments&scope=project&per_page=100`],
    ["changelog", (s: string) => `/api/v3/projects/${s}/changelog?per_page=100`],
    ["messages for every platform", (s: string) => `/api/v3/projects/${s}/messages?per_page=100`],
    ["ios messages", (s: string) => `/api/v3/projects/${s}/messages?platform=ios&app_version=2.5.0`],
    ["revenue per feature", (s: string) => `/api/v3/projects/${s}/revenue/features?per_page=100`],
    ["voters", (s: string) => `/api/v3/projects/${s}/voters?per_page=100`],
  ])("gives the same %s", async (_name, path) => {
    const [a, b] = await readBoth(path);
    expect(b).toEqual(a);
    expect(a.data.length ?? 1).toBeGreaterThan(0);
  });

  it("carries the merge: unmerging it in the copy gives what unmerging it in the original gives", async () => {
    const unmerge = async (slug: string, key: string) => {
      const all = (
        await body<Answer<"/api/v3/projects/{slug}/admin/features", "get">>(
          await ctx.get(`/api/v3/projects/${slug}/admin/features?per_page=100`, key),
        )
      ).data;
      const merged = all.filter((feature) => feature.merged_into !== null);
      expect(merged).toHaveLength(1);
      const response = await ctx.send("POST", `/api/v3/projects/${slug}/admin/features/${merged[0]!.id}/unmerge`, key);
      expect(response.status).toBe(200);
    };
    await unmerge(original.slug, original.key);
    await unmerge(copy.slug, copy.key);
    for (const path of [
      (s: string) => `/api/v3/projects/${s}/features?sort=top&per_page=100`,
      (s: string) => `/api/v3/projects/${s}/features?sort=trending&scope=project&per_page=100`,
      (s: string) => `/api/v3/projects/${s}/voters?per_page=100`,
    ]) {
      // Each unmerge stamps updated_at with its own time.
      const pages = await readBoth<{ data: { updated_at: unknown }[] }>(path);
      const [a, b] = pages.map((page) => page.data.map(({ updated_at: _at, ...rest }) => rest));
      expect(b).toEqual(a);
    }
  });

  it("gives the same comment threads on the most discussed feature", async () => {
    const top = async (slug: string, key: string) =>
      (await body<FeatureList>(await ctx.get(`/api/v3/projects/${slug}/features?sort=comments&scope=project&per_page=1`, key))).data[0]!.id;
    const a = await ctx.get(
      `/api/v3/projects/${original.slug}/features/${await top(original.slug, original.key)}/comments?per_page=100`,
      original.key,
    );
    const b = await ctx.get(`/api/v3/projects/${copy.slug}/features/${await top(copy.slug, copy.key)}/comments?per_page=100`, copy.key);
    const [left, right] = [withoutIds(await body<unknown>(a)), withoutIds(await body<unknown>(b))] as { data: unknown[] }[];
    expect(left!.data.length).toBeGreaterThan(0);
    expect(right).toEqual(left);
  });
});
